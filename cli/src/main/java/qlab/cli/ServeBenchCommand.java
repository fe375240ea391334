package qlab.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import qlab.engine.QlabException;
import qlab.serve.LoadGenerator;

@Command(name = "serve-bench", mixinStandardHelpOptions = true,
        description = "Load generator for an OpenAI-compatible server (qlab serve, llama-server): streaming clients at"
                + " each concurrency; time to first token, inter-token latency, tokens/s; a repeated prompt cold and cached.",
        footer = {"", "Example:",
                "  ./qlab serve-bench --url http://127.0.0.1:8080 --clients 1,4,16,64 --max-tokens 32 --out serve.json"})
final class ServeBenchCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--url", defaultValue = "http://127.0.0.1:8080", description = "The server (default: ${DEFAULT-VALUE}).")
    URI url;

    @Option(names = "--model", defaultValue = "default", description = "Model name sent in requests (default: ${DEFAULT-VALUE}).")
    String model;

    @Option(names = "--clients", defaultValue = "1,4,16,64", split = ",", description = "Concurrent clients per level (default: ${DEFAULT-VALUE}).")
    List<Integer> clients;

    @Option(names = "--requests", defaultValue = "1", description = "Streamed requests per client per level (default: ${DEFAULT-VALUE}).")
    int requests;

    @Option(names = "--max-tokens", defaultValue = "32", description = "Tokens per request, stop tokens ignored (default: ${DEFAULT-VALUE}).")
    int maxTokens;

    @Option(names = "--prompt-chars", defaultValue = "300", description = "Characters of datasets/eval/en-prose.txt in each prompt (default: ${DEFAULT-VALUE}).")
    int promptChars;

    @Option(names = "--repeat-chars", defaultValue = "2200", description = "Characters of the prompt sent twice for the prefix cache; 0 skips it (default: ${DEFAULT-VALUE}).")
    int repeatChars;

    @Option(names = "--text", description = "Text the prompts are cut from (default: datasets/eval/en-prose.txt).")
    Path text;

    @Option(names = "--out", description = "Write the JSON here (default: stdout).")
    Path out;

    @Override
    public Integer call() throws Exception {
        PrintWriter err = spec.commandLine().getErr();
        if (requests < 1 || maxTokens < 1 || promptChars < 1 || repeatChars < 0 || clients.stream().anyMatch(c -> c < 1)) {
            throw new QlabException("serve-bench: --clients, --requests, --max-tokens and --prompt-chars must be at least 1");
        }
        Path source = text != null ? text : Path.of(System.getProperty("qlab.home", "."), "datasets", "eval", "en-prose.txt");
        String prose;
        try {
            prose = Files.readString(source).replaceAll("\\s+", " ");
        } catch (IOException e) {
            throw new QlabException(source + ": cannot read (" + e.getMessage() + ")");
        }
        if (prose.length() < Math.max(promptChars, repeatChars)) {
            throw new QlabException(source + ": shorter than --prompt-chars / --repeat-chars");
        }
        LoadGenerator gen = new LoadGenerator(url, model);
        String prompt = prose.substring(0, promptChars);
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("url", url.toString());
        try {
            result.put("prompt_tokens", gen.tokenCount("Level 1 request 0-0. " + prompt));
        } catch (IOException e) {
            throw new QlabException(url + ": no server answers (" + (e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName()) + ")");
        }
        result.put("max_tokens", maxTokens);
        gen.level(1, 1, "Warm-up. " + prompt, 4); // warm-up: the server's first request pays for code paths compiled once
        List<LoadGenerator.Level> levels = new ArrayList<>();
        for (int c : clients) {
            LoadGenerator.Level l = gen.level(c, requests, prompt, maxTokens);
            levels.add(l);
            err.printf("clients %3d: %4d requests (%d failed) in %6.1f s; %7.1f tok/s; TTFT median %8.1f p99 %8.1f ms;"
                    + " ITL median %7.1f p99 %7.1f ms%n", c, l.requests(), l.failed(), l.seconds(), l.tokensPerSecond(),
                    l.ttftMedian(), l.ttftP99(), l.itlMedian(), l.itlP99());
            err.flush();
        }
        result.put("levels", levels);
        if (repeatChars > 0) {
            List<LoadGenerator.Repeat> repeats = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                LoadGenerator.Repeat r = gen.repeat("Repeat " + i + " " + System.nanoTime() + ". " + prose.substring(0, repeatChars));
                repeats.add(r);
                err.printf("repeated prompt of %d tokens: time to first token %.1f ms cold, %.1f ms repeated (%.1f%%)%n",
                        r.promptTokens(), r.coldMs(), r.warmMs(), 100 * r.warmMs() / r.coldMs());
            }
            result.put("repeats", repeats);
        }
        String json = new com.fasterxml.jackson.databind.ObjectMapper().writerWithDefaultPrettyPrinter().writeValueAsString(result);
        if (out != null) {
            Files.writeString(out, json + "\n");
        } else {
            spec.commandLine().getOut().println(json);
        }
        return 0;
    }
}
