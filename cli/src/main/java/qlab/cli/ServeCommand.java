package qlab.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import qlab.engine.QlabException;
import qlab.engine.chat.ChatTemplate;
import qlab.engine.model.Model;
import qlab.engine.model.Transformer;
import qlab.engine.tokenizer.Tokenizer;
import qlab.serve.OpenAiServer;
import qlab.serve.Scheduler;
import qlab.serve.ServedModel;

@Command(name = "serve", mixinStandardHelpOptions = true,
        description = "An OpenAI-compatible HTTP server: /v1/chat/completions, /v1/completions (echo log-probabilities"
                + " included), /v1/models, /tokenize, /detokenize, /health, /metrics; continuous batching and a prefix cache.",
        footer = {"", "Example:",
                "  ./qlab serve --model models/q05b/q4_0.safetensors --port 8080 --parallel 4",
                "  curl -s localhost:8080/v1/completions -d '{\"prompt\": \"The harbour\", \"max_tokens\": 16}'"})
final class ServeCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--model", required = true, description = "Model directory, quantized file or GGUF file.")
    Path model;

    @Option(names = "--host", defaultValue = "127.0.0.1", description = "Address to listen on (default: ${DEFAULT-VALUE}, loopback only).")
    String host;

    @Option(names = "--port", defaultValue = "8080", description = "Port (default: ${DEFAULT-VALUE}; 0 picks a free one).")
    int port;

    @Option(names = "--parallel", defaultValue = "4", description = "Sequences generating at once (slots) (default: ${DEFAULT-VALUE}).")
    int parallel;

    @Option(names = "--queue", defaultValue = "64", description = "Requests waiting for a slot at most; past it 429 (default: ${DEFAULT-VALUE}).")
    int queue;

    @Option(names = "--ctx", defaultValue = "4096", description = "Context per sequence, prompt and generated tokens (default: ${DEFAULT-VALUE}).")
    int ctx;

    @Option(names = "--cache-mib", defaultValue = "256", description = "Prefix cache budget in MiB; 0 turns it off (default: ${DEFAULT-VALUE}).")
    long cacheMib;

    @Option(names = "--prefill-chunk", defaultValue = "64", description = "Prompt tokens read per scheduler step, a multiple of 32 (default: ${DEFAULT-VALUE}).")
    int prefillChunk;

    @Option(names = "--tiled-decode", description = "Decode 8 or more sequences at once through the token tile: faster, but a"
            + " sequence's tokens may then differ (rounding) from those it gives alone.")
    boolean tiledDecode;

    @Option(names = "--max-body-mib", defaultValue = "8", description = "Largest request body in MiB; past it 413 (default: ${DEFAULT-VALUE}).")
    long maxBodyMib;

    @Option(names = "--api-key", paramLabel = "K", description = "Require \"Authorization: Bearer K\" on every route but /health.")
    String apiKey;

    @Option(names = "--template", paramLabel = "NAME", description = "Chat template instead of the model's own: qwen2.5, qwen3 or llama3.")
    String templateName;

    @Option(names = "--alias", description = "Model name in responses and /v1/models (default: the --model file or directory name).")
    String alias;

    @Mixin
    EngineOptions engine;

    @Override
    public Integer call() throws InterruptedException {
        PrintWriter err = spec.commandLine().getErr();
        if (parallel < 1 || queue < 0 || ctx < 2 || cacheMib < 0 || maxBodyMib < 1 || port < 0 || port > 65535) {
            throw new QlabException("serve: --parallel must be >= 1, --queue >= 0, --ctx >= 2, --cache-mib >= 0,"
                    + " --max-body-mib >= 1 and --port in [0, 65535]");
        }
        Models.requireExists(model);
        Scheduler.Settings settings = new Scheduler.Settings(parallel, queue, ctx, prefillChunk, tiledDecode,
                cacheMib << 20);
        OpenAiServer server = OpenAiServer.start(new OpenAiServer.Options(host, port, settings, maxBodyMib << 20, apiKey));
        Runtime.getRuntime().addShutdownHook(new Thread(server::close));
        err.printf("qlab serve: listening on http://%s:%d, loading %s%n", host, server.port(), model);
        err.flush();
        Tokenizer tokenizer = TextTokens.require(model);
        ChatTemplate template = null;
        try {
            template = ChatTemplates.choose(model, templateName);
        } catch (QlabException e) {
            if (templateName != null) {
                throw e;
            }
            err.println("qlab serve: " + e.getMessage() + "; /v1/chat/completions answers 400 (--template names one)");
        }
        Set<Integer> stops = StopTokens.forModel(model, Optional.of(tokenizer), Optional.ofNullable(template));
        Model m = Models.open(model);
        if (ctx > m.config().maxPositionEmbeddings()) {
            err.printf("qlab serve: --ctx %d is beyond the model's max_position_embeddings %d%n", ctx,
                    m.config().maxPositionEmbeddings());
        }
        Transformer tf = new Transformer(m, engine.pool(), engine.kvTypes());
        String id = alias != null ? alias : model.toAbsolutePath().normalize().getFileName().toString();
        server.ready(new ServedModel(id, tf, tokenizer, template, stops));
        err.printf("qlab serve: ready (model %s, %d slots, ctx %d, %d threads, activations %s)%n", id, parallel, ctx,
                engine.count(), engine.activations());
        err.flush();
        server.join();
        return 0;
    }
}
