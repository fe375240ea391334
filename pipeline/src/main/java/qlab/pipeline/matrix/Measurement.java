package qlab.pipeline.matrix;

import java.util.Locale;

/** What a sweep can be asked to measure for each config. */
public enum Measurement {
    /** Perplexity and KL divergence against the fp32 reference. */
    QUALITY,
    /** Single-stream prefill and decode tokens per second, peak RSS. */
    THROUGHPUT,
    /** Batched decode tokens per second for each configured batch size. */
    BATCH;

    public String yamlName() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static Measurement fromYaml(String name) {
        for (Measurement m : values()) {
            if (m.yamlName().equals(name)) {
                return m;
            }
        }
        return null;
    }

    /** True for the measurements that time the machine and so must run alone. */
    public boolean timed() {
        return this != QUALITY;
    }
}
