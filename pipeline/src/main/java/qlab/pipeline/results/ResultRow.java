package qlab.pipeline.results;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;
import qlab.pipeline.matrix.Activations;

/**
 * A result row as read back from any result file, whatever schema version wrote it: a column the
 * file does not have reads as null, except {@code activations} and {@code kvCache}, which read as f32
 * (the only choice before each column existed). Used by resume, Pareto analysis and the report.
 *
 * @param activations      {@code f32} or {@code int8}
 * @param kvCache          the KV cache types: {@code f32}, {@code q8_0}, ... or {@code k=TYPE,v=TYPE}
 * @param machine          where the row was measured (code version, CPU, cores, JDK, vector width)
 * @param decodeBytes      bytes of weights one decode step reads
 * @param readBandwidthGbs read bandwidth measured beside the row's timed runs, same threads
 * @param fmaPeakGmacs     f32 multiply-add peak measured beside the row's timed runs, same threads
 * @param loadAvgBefore    1-minute load average just before the row's timed runs (null: none, or not Linux)
 * @param loadAvgAfter     1-minute load average just after them
 */
public record ResultRow(String runId, long timestamp, String configId, String modelId, String modelHash,
                        String format, Integer groupSize, Map<String, String> tensorOverrides, String imatrix,
                        String activations, String kvCache, int threads, Double bitsPerWeight, Long fileBytes, Double ppl,
                        Double pplSe, Double klMean, Double klSe, Double klP99, Double top1Agree, Double prefillTps,
                        Double decodeTpsMedian, Double decodeTpsMin, Double decodeTpsMax,
                        Map<Integer, Double> batchTps, Long peakRssBytes, String status, String statusReason,
                        Machine machine, Long decodeBytes, Double readBandwidthGbs, Double fmaPeakGmacs,
                        Double loadAvgBefore, Double loadAvgAfter) {

    /** The machine and code of a row; fields null in rows that lack them. */
    public record Machine(String codeVersion, String host, String cpu, Integer cores, String jdk, Integer vectorBits) {
        public static final Machine UNKNOWN = new Machine(null, null, null, null, null, null);
    }

    private static final String F32 = Activations.F32.yamlName();
    private static final String INT8 = Activations.INT8.yamlName();

    public boolean ok() {
        return "ok".equals(status);
    }

    /**
     * A short label: {@code q4_8/128+attn=q8_0 imx=wiki t2}, with {@code  int8} after it for int8
     * activations and {@code  kv=q8_0} for a KV cache other than f32.
     */
    public String label() {
        return mix() + " t" + threads + runLabel();
    }

    /** The label without the thread count, which changes only speed: {@code q4_8/128+attn=q8_0 imx=wiki int8}. */
    public String quantizationLabel() {
        return mix() + runLabel();
    }

    private String runLabel() {
        return (INT8.equals(activations) ? " int8" : "") + (F32.equals(kvCache) ? "" : " kv=" + kvCache);
    }

    /**
     * What determines the row's quality measurements: the model, the mix, the importance matrix,
     * the activation path and the KV cache; rows equal in it differ only in speed.
     */
    public String quantizationKey() {
        return modelHash + "|" + mix() + "|" + activations + (F32.equals(kvCache) ? "" : "|kv=" + kvCache);
    }

    private String mix() {
        StringBuilder sb = new StringBuilder(format);
        if (groupSize != null) {
            sb.append('/').append(groupSize);
        }
        tensorOverrides.forEach((k, v) -> sb.append('+').append(k).append('=').append(v));
        if (imatrix != null) {
            sb.append(" imx=").append(imatrix);
        }
        return sb.toString();
    }

    public static ResultRow from(GenericRecord r) {
        Map<String, String> overrides = new TreeMap<>();
        Object o = get(r, "tensor_overrides");
        if (o instanceof Map<?, ?> m) {
            m.forEach((k, v) -> overrides.put(k.toString(), v.toString()));
        }
        Map<Integer, Double> batch = null;
        if (get(r, "batch_tps") instanceof List<?> list) {
            batch = new TreeMap<>();
            for (Object item : list) {
                GenericRecord b = (GenericRecord) item;
                batch.put(((Number) b.get("batch")).intValue(), ((Number) b.get("tps")).doubleValue());
            }
        }
        Number threads = (Number) get(r, "threads");
        Number timestamp = (Number) get(r, "timestamp");
        String activations = text(r, "activations");
        String kvCache = text(r, "kv_cache");
        return new ResultRow(text(r, "run_id"), timestamp == null ? 0L : timestamp.longValue(),
                text(r, "config_id"), text(r, "model_id"), text(r, "model_hash"), text(r, "format"),
                integer(r, "group_size"), Collections.unmodifiableMap(overrides), text(r, "imatrix"),
                activations == null ? F32 : activations, kvCache == null ? F32 : kvCache, threads == null ? 0 : threads.intValue(),
                real(r, "bits_per_weight"), longValue(r, "file_bytes"),
                real(r, "ppl"), real(r, "ppl_se"), real(r, "kl_mean"), real(r, "kl_se"), real(r, "kl_p99"),
                real(r, "top1_agree"), real(r, "prefill_tps"), real(r, "decode_tps_median"),
                real(r, "decode_tps_min"), real(r, "decode_tps_max"), batch, longValue(r, "peak_rss_bytes"),
                text(r, "status"), text(r, "status_reason"),
                new Machine(text(r, "code_version"), text(r, "host"), text(r, "cpu"), integer(r, "cores"), text(r, "jdk"),
                        integer(r, "vector_bits")),
                longValue(r, "decode_bytes"), real(r, "read_bandwidth_gbs"), real(r, "fma_peak_gmacs"),
                real(r, "load_avg_before"), real(r, "load_avg_after"));
    }

    private static Object get(GenericRecord r, String field) {
        Schema.Field f = r.getSchema().getField(field);
        return f == null ? null : r.get(f.pos());
    }

    private static String text(GenericRecord r, String field) {
        Object v = get(r, field);
        return v == null ? null : v.toString();
    }

    private static Double real(GenericRecord r, String field) {
        Object v = get(r, field);
        return v == null ? null : ((Number) v).doubleValue();
    }

    private static Integer integer(GenericRecord r, String field) {
        Object v = get(r, field);
        return v == null ? null : ((Number) v).intValue();
    }

    private static Long longValue(GenericRecord r, String field) {
        Object v = get(r, field);
        return v == null ? null : ((Number) v).longValue();
    }
}
