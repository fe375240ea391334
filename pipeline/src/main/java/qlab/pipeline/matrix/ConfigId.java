package qlab.pipeline.matrix;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import qlab.pipeline.CalibrationSet;
import qlab.pipeline.EvalSettings;
import qlab.pipeline.KvCacheChoice;
import qlab.pipeline.ModelSpec;
import qlab.pipeline.QuantSpec;
import qlab.pipeline.ThroughputSettings;

/**
 * Stable identities: a config id is the SHA-256 (first 16 hex digits) of a canonical JSON form of
 * the config. The canonical form holds contents, not locations (text and calibration files enter by
 * their hashes), and only the settings of the measurements the config asks for, so a config keeps
 * its id when files move and changes it when anything that affects its numbers changes.
 *
 * <p>The activation path enters only when it is int8: configs with f32 activations, the only kind
 * before the axis existed, keep the ids they had, so their rows and cached measurements still count;
 * likewise the KV cache types enter only when they are not f32.
 */
public final class ConfigId {

    /** Bump when the canonical form changes meaning; old results then no longer count as done. */
    static final int CANONICAL_VERSION = 1;

    private static final ObjectMapper CANONICAL = new ObjectMapper()
            .configure(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS, true);

    private ConfigId() {
    }

    static String of(ModelSpec model, QuantSpec quant, CalibrationSet calibration, Activations activations,
                     KvCacheChoice kvCache, int threads, EvalSettings eval, ThroughputSettings throughput, List<Measurement> measurements) {
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("v", CANONICAL_VERSION);
        c.put("model", model.key());
        c.put("format", quant.format());
        c.put("group_size", quant.groupSize());
        c.put("overrides", quant.overrides());
        c.put("imatrix", calibration == null ? null
                : Map.of("name", calibration.name(), "content", calibration.contentHash()));
        if (activations.int8()) {
            c.put("activations", activations.yamlName());
        }
        if (!kvCache.isF32()) {
            c.put("kv_cache", Map.of("k", kvCache.keys(), "v", kvCache.values()));
        }
        c.put("threads", threads);
        c.put("measurements", measurements.stream().map(Measurement::yamlName).toList());
        if (measurements.contains(Measurement.QUALITY)) {
            c.put("eval", Map.of("text", eval.textHash(), "ctx", eval.ctx(), "tokens", eval.tokens()));
        }
        if (throughput != null && measurements.stream().anyMatch(Measurement::timed)) {
            Map<String, Object> t = new LinkedHashMap<>();
            t.put("prompt", eval.textHash());
            if (measurements.contains(Measurement.THROUGHPUT)) {
                t.put("prefill_tokens", throughput.prefillTokens());
                t.put("decode_tokens", throughput.decodeTokens());
            }
            if (measurements.contains(Measurement.BATCH)) {
                t.put("batch_sizes", throughput.batchSizes());
                t.put("decode_tokens", throughput.decodeTokens());
            }
            t.put("repeats", throughput.repeats());
            c.put("throughput", t);
        }
        return hash(c);
    }

    /** First 16 hex digits of the SHA-256 of the canonical JSON of {@code value}. */
    public static String hash(Object value) {
        try {
            return sha256(CANONICAL.writeValueAsString(value)).substring(0, 16);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("canonical form not serializable", e);
        }
    }

    public static String sha256(String text) {
        return sha256(text.getBytes(StandardCharsets.UTF_8));
    }

    public static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JDK", e);
        }
    }
}
