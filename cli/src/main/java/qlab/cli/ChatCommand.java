package qlab.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import qlab.engine.QlabException;
import qlab.engine.chat.ChatMessage;
import qlab.engine.chat.ChatTemplate;
import qlab.engine.chat.Conversation;
import qlab.engine.model.KvCache;
import qlab.engine.model.Model;
import qlab.engine.model.Transformer;
import qlab.engine.sampling.Generation;
import qlab.engine.sampling.Sampler;
import qlab.engine.tokenizer.StreamingDecoder;
import qlab.engine.tokenizer.Tokenizer;
import qlab.engine.util.WorkerPool;

@Command(name = "chat", mixinStandardHelpOptions = true,
        description = "Chat with a model on the terminal in its own chat template (Qwen2.5, Qwen3 or Llama 3); /reset starts over, /exit ends.",
        footer = {"", "Example:", "  ./qlab chat --model models/small --model-defaults"})
final class ChatCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--model", required = true, description = "Model directory or quantized file (with a tokenizer.json), or a GGUF file.")
    Path model;

    @Option(names = "--template", paramLabel = "NAME", description = "Chat template to use instead of the model's own:"
            + " qwen2.5, qwen3 or llama3.")
    String templateName;

    @Option(names = "--system", description = "System prompt (default: the template's own).")
    String system;

    @Option(names = "--max-tokens", defaultValue = "256", description = "New tokens per reply at most (default: ${DEFAULT-VALUE}).")
    int maxTokens;

    @Option(names = "--ctx", defaultValue = "4096", description = "Context length of the session (default: ${DEFAULT-VALUE}).")
    int ctx;

    @Mixin
    SamplingFlags sampling;

    @Mixin
    EngineOptions threads;

    private final InputStream input;

    ChatCommand() {
        this(System.in);
    }

    ChatCommand(InputStream input) {
        this.input = input;
    }

    @Override
    public Integer call() {
        if (maxTokens < 1 || ctx < 2) {
            throw new QlabException("--max-tokens and --ctx must be positive");
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        Tokenizer tok = TextTokens.require(model);
        ChatTemplate template = ChatTemplates.choose(model, templateName);
        Set<Integer> stops = StopTokens.forModel(model, Optional.of(tok), Optional.of(template));
        Sampler sampler = new Sampler(sampling.resolve(model, err));
        Model m = Models.open(model);
        BufferedReader in = new BufferedReader(new InputStreamReader(input, StandardCharsets.UTF_8));
        try (WorkerPool pool = threads.pool()) {
            Transformer tf = new Transformer(m, pool, threads.kvTypes());
            KvCache cache = tf.newCache(ctx);
            int[] history = new int[0];
            Conversation conv = newConversation(template);
            err.println("chat with " + model + " (" + sampler.config().describe() + "); /reset, /exit");
            while (true) {
                err.print("you> ");
                err.flush();
                String line = in.readLine();
                if (line == null || line.strip().equals("/exit")) {
                    break;
                }
                if (line.isBlank()) {
                    continue;
                }
                if (line.strip().equals("/reset")) {
                    conv = newConversation(template);
                    cache.clear();
                    history = new int[0];
                    err.println("(conversation cleared)");
                    continue;
                }
                conv.add(ChatMessage.user(line));
                Conversation.PromptPiece piece = conv.nextPrompt();
                if (piece.restart()) {
                    cache.clear();
                    history = new int[0];
                }
                int[] ids = tok.encode(piece.text());
                if (cache.length() + ids.length + maxTokens > ctx) {
                    err.println("(context of " + ctx + " tokens is full; /reset to start over, or raise --ctx)");
                    conv = newConversation(template);
                    cache.clear();
                    history = new int[0];
                    continue;
                }
                StreamingDecoder stream = tok.streamingDecoder(false);
                Generation.Result r = Generation.run(tf, cache, history, ids, sampler, maxTokens, stops::contains, id -> {
                    if (!stops.contains(id)) {
                        out.print(stream.accept(id));
                        out.flush();
                    }
                }, true);
                out.println(stream.finish());
                out.flush();
                int[] kept = r.stopped() ? Arrays.copyOf(r.ids(), r.ids().length - 1) : r.ids();
                int[] h = Arrays.copyOf(history, history.length + ids.length + kept.length);
                System.arraycopy(ids, 0, h, history.length, ids.length);
                System.arraycopy(kept, 0, h, history.length + ids.length, kept.length);
                history = h;
                conv.addAssistantReply(tok.decode(kept));
                err.printf("[%d prompt tokens, %d new at %.1f tok/s, %d in context]%n", ids.length, kept.length,
                        r.decodeTps(), cache.length());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return 0;
    }

    private Conversation newConversation(ChatTemplate template) {
        Conversation c = new Conversation(template, null);
        if (system != null) {
            c.add(ChatMessage.system(system));
        }
        return c;
    }
}
