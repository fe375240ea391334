package qlab.pipeline;

import java.io.Serializable;
import java.util.Map;
import java.util.TreeMap;

/**
 * Speed of a quantized model with a given thread count. Fields are null when that part was not asked for.
 *
 * @param prefillTps      prompt tokens per second
 * @param decodeTpsMedian generated tokens per second, median over the repeats
 * @param decodeTpsMin    slowest repeat
 * @param decodeTpsMax    fastest repeat
 * @param batchTps        generated tokens per second (all sequences together) per batch size
 * @param peakRssBytes    peak resident set size of the process during the measurement
 * @param decodeBytes     bytes of weights one decode step reads (every layer matrix and the LM head)
 * @param readGbs         read bandwidth in GB/s measured right after the timed runs, at the same thread
 *                        count: a share of it is only meaningful against the bandwidth of the same minute
 * @param fmaGmacs        f32 multiply-add peak in 10^9/s measured right after the timed runs, same threads
 */
public record ThroughputMeasurement(Double prefillTps, Double decodeTpsMedian, Double decodeTpsMin,
                                    Double decodeTpsMax, Map<Integer, Double> batchTps, Long peakRssBytes,
                                    Long decodeBytes, Double readGbs, Double fmaGmacs)
        implements Serializable {

    public ThroughputMeasurement {
        batchTps = batchTps == null ? null : new TreeMap<>(batchTps);
    }

    /**
     * This measurement with the parts that were not asked for set to null, so that a row never shows a
     * number nobody asked to measure.
     */
    public ThroughputMeasurement restrictTo(ThroughputSettings settings) {
        boolean single = settings.singleStream();
        return new ThroughputMeasurement(single ? prefillTps : null, single ? decodeTpsMedian : null,
                single ? decodeTpsMin : null, single ? decodeTpsMax : null,
                settings.batched() ? batchTps : null, peakRssBytes, decodeBytes, readGbs, fmaGmacs);
    }

    /** The first value that is present but not a finite number, by name, or null when there is none. */
    public String firstNonFinite() {
        Double[] values = {prefillTps, decodeTpsMedian, decodeTpsMin, decodeTpsMax, readGbs, fmaGmacs};
        String[] names = {"prefill_tps", "decode_tps_median", "decode_tps_min", "decode_tps_max", "read_gbs", "fma_gmacs"};
        for (int i = 0; i < values.length; i++) {
            if (values[i] != null && !Double.isFinite(values[i])) {
                return names[i] + " is " + values[i];
            }
        }
        if (batchTps != null) {
            for (Map.Entry<Integer, Double> e : batchTps.entrySet()) {
                if (e.getValue() == null || !Double.isFinite(e.getValue())) {
                    return "batch_tps[" + e.getKey() + "] is " + e.getValue();
                }
            }
        }
        return null;
    }
}
