package qlab.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import qlab.engine.QlabException;
import qlab.engine.chat.ChatMessage;
import qlab.engine.chat.ChatTemplate;
import qlab.engine.model.KvCache;
import qlab.engine.model.Model;
import qlab.engine.model.Transformer;
import qlab.engine.sampling.Generation;
import qlab.engine.sampling.Sampler;
import qlab.engine.sampling.SamplingConfig;
import qlab.engine.tokenizer.StreamingDecoder;
import qlab.engine.tokenizer.Tokenizer;
import qlab.engine.util.WorkerPool;

@Command(name = "generate", mixinStandardHelpOptions = true,
        description = "Continue a prompt (text or token ids): greedy by default, sampled with --temperature.",
        footer = {"", "Example:",
                "  ./qlab generate --model models/small --prompt \"The harbour at dawn\" \\",
                "      --max-tokens 24 --temperature 0.8 --top-p 0.9 --seed 7"})
final class GenerateCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--model", required = true, description = "Model directory, quantized file or GGUF file.")
    Path model;

    static final class Prompt {
        @Option(names = "--ids", description = "Prompt token ids, e.g. 1,2,3 (prints ids).")
        String ids;

        @Option(names = "--prompt", description = "Prompt text, tokenized with the model's tokenizer.json (prints text).")
        String text;
    }

    @ArgGroup(exclusive = true, multiplicity = "1")
    Prompt prompt;

    @Option(names = "--chat", description = "Send --prompt as a user message in the model's chat template"
            + " (Qwen2.5, Qwen3 or Llama 3, recognised from tokenizer_config.json) and stop at the end of the turn.")
    boolean chat;

    @Option(names = "--template", paramLabel = "NAME", description = "Chat template to use instead of the model's own:"
            + " qwen2.5, qwen3 or llama3.")
    String templateName;

    @Option(names = "--system", description = "With --chat: a system message before the prompt.")
    String system;

    @Option(names = "--max-tokens", defaultValue = "32", description = "New tokens at most (default: ${DEFAULT-VALUE}).")
    int maxTokens;

    @Option(names = "--ignore-eos", description = "Do not stop at the end-of-text / end-of-turn tokens.")
    boolean ignoreEos;

    @Option(names = "--json", description = "Print one JSON object on stdout and nothing else.")
    boolean json;

    @Mixin
    SamplingFlags sampling;

    @Mixin
    EngineOptions threads;

    @Override
    public Integer call() {
        if (maxTokens < 1) {
            throw new QlabException("--max-tokens must be at least 1, got " + maxTokens);
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if ((chat || system != null) && prompt.text == null) {
            throw new QlabException("--chat and --system need --prompt (text)");
        }
        if ((system != null || templateName != null) && !chat) {
            throw new QlabException("--system and --template need --chat");
        }
        Optional<Tokenizer> tokenizer = prompt.text != null ? Optional.of(TextTokens.require(model)) : TextTokens.forModel(model);
        ChatTemplate template = chat ? ChatTemplates.choose(model, templateName) : null;
        String text = chat ? template.render(chatMessages(), null, true) : prompt.text;
        int[] ids = prompt.text != null ? tokenizer.get().encode(text) : IdList.parse("--ids", prompt.ids);
        if (ids.length == 0) {
            throw new QlabException("--prompt: the text encodes to no tokens");
        }
        SamplingConfig config = sampling.resolve(model, err);
        Set<Integer> stops = ignoreEos ? Set.of() : StopTokens.forModel(model, tokenizer, Optional.ofNullable(template));
        Model m = Models.open(model);
        boolean streamText = prompt.text != null && !json;
        StreamingDecoder stream = tokenizer.map(t -> t.streamingDecoder(false)).orElse(null);
        Generation.Result r;
        try (WorkerPool pool = threads.pool()) {
            Transformer tf = new Transformer(m, pool, threads.kvTypes());
            KvCache cache = tf.newCache(ids.length + maxTokens);
            r = Generation.run(tf, cache, new int[0], ids, new Sampler(config), maxTokens, stops::contains, id -> {
                if (streamText && !stops.contains(id)) {
                    out.print(stream.accept(id));
                    out.flush();
                }
            }, false);
        }
        int[] gen = r.stopped() ? Arrays.copyOf(r.ids(), r.ids().length - 1) : r.ids();
        if (json) {
            Map<String, Object> j = new LinkedHashMap<>();
            j.put("ids", gen);
            j.put("text", tokenizer.map(t -> t.decode(gen)).orElse(null));
            j.put("stop_id", r.stopped() ? r.ids()[r.ids().length - 1] : null);
            j.put("prompt_ids", ids);
            j.put("sampling", config.describe());
            j.put("seed", config.seed());
            j.put("prefill_ms", r.prefillSeconds() * 1e3);
            j.put("decode_tps", Double.isNaN(r.decodeTps()) ? null : r.decodeTps());
            j.put("threads", threads.count());
            JsonOutput.print(out, j);
        } else {
            if (streamText) {
                out.println(stream.finish());
            } else {
                out.println(String.join(" ", Arrays.stream(gen).mapToObj(Integer::toString).toList()));
                // ids on stdout stay scriptable; the text goes beside them for the reader
                tokenizer.ifPresent(t -> err.println("text: " + t.decode(gen)));
            }
            out.flush();
            err.printf("prompt %d tokens in %.1f ms; %d new tokens%s%s; %s%n", ids.length, r.prefillSeconds() * 1e3, gen.length,
                    Double.isNaN(r.decodeTps()) ? "" : String.format(" at %.1f tok/s", r.decodeTps()),
                    r.stopped() ? " (stopped at token " + r.ids()[r.ids().length - 1] + ")" : "", config.describe());
        }
        return 0;
    }

    private java.util.List<ChatMessage> chatMessages() {
        return system == null ? java.util.List.of(ChatMessage.user(prompt.text))
                : java.util.List.of(ChatMessage.system(system), ChatMessage.user(prompt.text));
    }
}
