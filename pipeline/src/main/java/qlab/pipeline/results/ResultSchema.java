package qlab.pipeline.results;

import qlab.engine.bench.MachineInfo;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import qlab.pipeline.QualityMeasurement;
import qlab.pipeline.ThroughputMeasurement;
import qlab.pipeline.matrix.SweepConfig;

/**
 * The versioned result schema ({@code qlab/pipeline/result-v4.avsc}) and the one place that turns an
 * outcome into a row of it. Parquet files, the journal and every view derive from this schema.
 * Version 2 added {@code activations} to version 1, version 3 the machine limits measured beside each
 * timed config ({@code decode_bytes}, {@code read_bandwidth_gbs}, {@code fma_peak_gmacs}), version 4
 * {@code kv_cache}; files of any
 * version are read by column name.
 */
public final class ResultSchema {

    public static final String RESOURCE = "/qlab/pipeline/result-v4.avsc";
    public static final Schema CURRENT = load();
    public static final int VERSION = ((Number) CURRENT.getObjectProp("qlab.schema.version")).intValue();

    private ResultSchema() {
    }

    private static Schema load() {
        try (InputStream in = ResultSchema.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " is missing from the classpath");
            }
            return new Schema.Parser().parse(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * {@code record} with the current schema, its columns taken by name: a row read from a file of an
     * earlier version (a killed run's journal) gets null in the columns added since. Parquet's Avro
     * writer takes the fields of a record by position, so an older record cannot be written as it is.
     */
    public static GenericRecord upgrade(GenericRecord record) {
        if (record.getSchema().equals(CURRENT)) {
            return record;
        }
        GenericData.Record r = new GenericData.Record(CURRENT);
        for (Schema.Field f : CURRENT.getFields()) {
            Schema.Field old = record.getSchema().getField(f.name());
            if (old != null) {
                r.put(f.pos(), record.get(old.pos()));
            }
        }
        return r;
    }

    /** The row of a finished outcome. */
    public static GenericRecord toRecord(ConfigOutcome o, RunInfo run) {
        if (o.pending()) {
            throw new IllegalStateException("config " + o.config().configId() + " is not finished");
        }
        SweepConfig c = o.config();
        MachineInfo m = o.machine() != null ? o.machine() : MachineInfo.current();
        GenericData.Record r = new GenericData.Record(CURRENT);
        r.put("run_id", run.runId());
        r.put("timestamp", o.finishedAt());
        r.put("code_version", run.codeVersion());
        r.put("host", m.host());
        r.put("cpu", m.cpu());
        r.put("cores", m.cores());
        r.put("jdk", m.jdk());
        r.put("vector_bits", m.vectorBits());
        if (o.model() != null) {
            r.put("model_id", o.model().modelId());
            r.put("model_hash", o.model().modelHash());
        }
        r.put("config_id", c.configId());
        r.put("format", c.quant().format());
        r.put("group_size", c.quant().groupSize());
        r.put("tensor_overrides", new TreeMap<>(c.quant().overrides()));
        r.put("imatrix", c.imatrixName());
        r.put("activations", c.activations().yamlName());
        r.put("kv_cache", c.kvCache().yamlName());
        if (o.checkpoint() != null) {
            r.put("bits_per_weight", o.checkpoint().bitsPerWeight());
            r.put("file_bytes", o.checkpoint().fileBytes());
        }
        QualityMeasurement q = o.quality();
        if (q != null) {
            r.put("ppl", q.ppl());
            r.put("ppl_se", q.pplSe());
            r.put("kl_mean", q.klMean());
            r.put("kl_se", q.klSe());
            r.put("kl_p99", q.klP99());
            r.put("top1_agree", q.top1Agree());
        }
        r.put("threads", c.threads());
        ThroughputMeasurement t = o.throughput();
        if (t != null) {
            r.put("prefill_tps", t.prefillTps());
            r.put("decode_tps_median", t.decodeTpsMedian());
            r.put("decode_tps_min", t.decodeTpsMin());
            r.put("decode_tps_max", t.decodeTpsMax());
            if (t.batchTps() != null) {
                Schema item = CURRENT.getField("batch_tps").schema().getTypes().get(1).getElementType();
                List<GenericRecord> batches = new ArrayList<>();
                for (Map.Entry<Integer, Double> e : t.batchTps().entrySet()) {
                    GenericData.Record b = new GenericData.Record(item);
                    b.put("batch", e.getKey());
                    b.put("tps", e.getValue());
                    batches.add(b);
                }
                r.put("batch_tps", batches);
            }
            r.put("peak_rss_bytes", t.peakRssBytes());
            r.put("decode_bytes", t.decodeBytes());
            r.put("read_bandwidth_gbs", t.readGbs());
            r.put("fma_peak_gmacs", t.fmaGmacs());
        }
        r.put("load_avg_before", o.loadBefore());
        r.put("load_avg_after", o.loadAfter());
        r.put("pareto_bpw_kl", o.paretoBpwKl());
        r.put("pareto_bpw_ppl", o.paretoBpwPpl());
        r.put("pareto_tps_kl", o.paretoTpsKl());
        r.put("status", o.status().column());
        r.put("status_reason", o.reason());
        return r;
    }
}
