package qlab.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import qlab.engine.QlabException;
import qlab.engine.bench.MachineInfo;
import qlab.engine.bench.ReadBandwidth;
import qlab.engine.bench.SingleStreamBench;
import qlab.engine.model.KvTypes;
import qlab.engine.model.Model;
import qlab.engine.model.Transformer;
import qlab.engine.util.WorkerPool;

@Command(name = "bench", mixinStandardHelpOptions = true,
        description = "Single-stream prefill and decode speed, next to the read bandwidth measured in the same run.",
        footer = {"", "Example:",
                "  ./qlab bench --model models/q05b/q4_0.safetensors --threads 2 \\",
                "      --activations int8"})
final class BenchCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--model", required = true, description = "Model directory, quantized file or GGUF file.")
    Path model;

    @Option(names = "--prompt-tokens", defaultValue = "64", description = "Prompt length (default: ${DEFAULT-VALUE}).")
    int promptTokens;

    @Option(names = "--decode-tokens", defaultValue = "64", description = "Tokens decoded per repetition (default: ${DEFAULT-VALUE}).")
    int decodeTokens;

    @Option(names = "--reps", defaultValue = "5", description = "Timed repetitions after one warm-up (default: ${DEFAULT-VALUE}).")
    int reps;

    @Option(names = "--prefill-chunk", defaultValue = "512",
            description = "Prompt tokens per forward pass; the scratch grows with it, the KV cache with the prompt (default: ${DEFAULT-VALUE}).")
    int prefillChunk;

    @Option(names = "--bandwidth-mib", defaultValue = "2048",
            description = "Buffer for the read-bandwidth measurement, larger than the caches (default: ${DEFAULT-VALUE}; 0 skips it).")
    int bandwidthMib;

    @Option(names = "--json", description = "Print one JSON object on stdout and nothing else.")
    boolean json;

    @Mixin
    EngineOptions threads;

    @Override
    public Integer call() {
        if (promptTokens < 1 || decodeTokens < 1 || reps < 1 || prefillChunk < 1) {
            throw new QlabException("--prompt-tokens, --decode-tokens, --reps and --prefill-chunk must be at least 1");
        }
        KvTypes kv = threads.kvTypes();
        Model m = Models.open(model);
        MachineInfo machine = MachineInfo.current();
        long weightBytes = m.weights().decodeBytes();
        SingleStreamBench.Result r;
        ReadBandwidth.Result bw = null;
        long hugePages;
        long peakRss;
        try (WorkerPool pool = threads.pool()) {
            r = SingleStreamBench.run(new Transformer(m, pool, kv), promptTokens, decodeTokens, reps, 42, prefillChunk);
            hugePages = MachineInfo.hugePageBytes(); // while the model is still held
            // The peak before the bandwidth buffer exists: the model's (2 GiB of buffer measured
            // first had put a q4_0 run's peak at 5.1 GB, against 1.9 without it).
            peakRss = MachineInfo.peakRssBytes();
            if (bandwidthMib > 0) {
                bw = ReadBandwidth.measure(pool, (long) bandwidthMib << 20, 5);
            }
        }
        long kvBytes = (long) (promptTokens + decodeTokens + 1) * m.config().numLayers() * kv.bytesPerTokenPerLayer(m.config());
        double effective = weightBytes * r.decodeTps().median() / 1e9;
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            Map<String, Object> j = new LinkedHashMap<>();
            j.put("model", model.toString());
            j.put("format", m.weights().lmHead().format());
            j.put("threads", threads.count());
            j.put("activations", threads.activations());
            j.put("prompt_tokens", promptTokens);
            j.put("decode_tokens", decodeTokens);
            j.put("reps", reps);
            j.put("prefill_chunk", prefillChunk);
            j.put("cache_type_k", kv.keys().name());
            j.put("cache_type_v", kv.values().name());
            j.put("kv_bytes_per_token_per_layer", kv.bytesPerTokenPerLayer(m.config()));
            j.put("kv_bytes", kvBytes);
            j.put("prefill_tps", r.prefillTps().median());
            j.put("prefill_tps_min", r.prefillTps().min());
            j.put("prefill_tps_max", r.prefillTps().max());
            j.put("decode_tps_median", r.decodeTps().median());
            j.put("decode_tps_min", r.decodeTps().min());
            j.put("decode_tps_max", r.decodeTps().max());
            j.put("decode_ms_per_token_median", 1000 / r.decodeTps().median());
            j.put("weight_bytes", weightBytes);
            j.put("effective_gbs", effective);
            j.put("read_bandwidth_gbs", bw == null ? null : bw.medianGbs());
            j.put("read_bandwidth_gbs_min", bw == null ? null : bw.minGbs());
            j.put("read_bandwidth_gbs_max", bw == null ? null : bw.maxGbs());
            j.put("bandwidth_ratio", bw == null ? null : effective / bw.medianGbs());
            j.put("jdk", machine.jdk());
            j.put("vector_bits", machine.vectorBits());
            j.put("cpu", machine.cpu());
            j.put("cores", machine.cores());
            j.put("load_average", MachineInfo.loadAverage());
            j.put("peak_rss_bytes", peakRss);
            j.put("huge_page_bytes", hugePages < 0 ? null : hugePages);
            JsonOutput.print(out, j);
        } else {
            out.printf("model      %s (%s weights, %.3f GB read per decoded token)%n", model, m.weights().lmHead().format(), weightBytes / 1e9);
            out.printf("machine    %s, %d cores, JDK %s, %d-bit vectors%n", machine.cpu(), machine.cores(), machine.jdk(), machine.vectorBits());
            out.printf("threads    %d, %s activations%n", threads.count(), threads.activations());
            out.printf("kv cache   %s, %d bytes per token per layer, %.1f MiB for %d positions%n", kv,
                    kv.bytesPerTokenPerLayer(m.config()), kvBytes / 1048576.0, promptTokens + decodeTokens + 1);
            out.printf("prefill    %.1f tok/s median (min %.1f, max %.1f), %d reps of %d tokens%n",
                    r.prefillTps().median(), r.prefillTps().min(), r.prefillTps().max(), reps, promptTokens);
            out.printf("decode     %.2f tok/s median (min %.2f, max %.2f) = %.1f ms/token, %d reps of %d tokens%n",
                    r.decodeTps().median(), r.decodeTps().min(), r.decodeTps().max(), 1000 / r.decodeTps().median(), reps, decodeTokens);
            if (bw != null) {
                out.printf("bandwidth  decode reads %.1f GB/s = %.0f%% of the measured read bandwidth %.1f GB/s (min %.1f, max %.1f; %d threads, %d MiB)%n",
                        effective, 100 * effective / bw.medianGbs(), bw.medianGbs(), bw.minGbs(), bw.maxGbs(), bw.threads(), bandwidthMib);
            } else {
                out.printf("bandwidth  decode reads %.1f GB/s%n", effective);
            }
            out.printf("memory     peak RSS %.0f MiB%s; load average %s%n", peakRss / 1048576.0,
                    hugePages < 0 ? "" : String.format(", %.0f MiB on 2 MiB pages", hugePages / 1048576.0), MachineInfo.loadAverage());
        }
        out.flush();
        return 0;
    }
}
