package qlab.pipeline.results;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.parquet.avro.AvroParquetWriter;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.io.LocalOutputFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Result files written before the current schema: version 1 had no {@code activations} column. */
class ResultFilesTest {

    @TempDir
    Path dir;

    private static Schema v1() throws IOException {
        try (InputStream in = ResultFilesTest.class.getResourceAsStream("/qlab/pipeline/result-v1.avsc")) {
            return new Schema.Parser().parse(in);
        }
    }

    /** An ok q4_0 row as the sweep wrote it with schema version 1. */
    private static GenericRecord v1Row(Schema v1, String configId) {
        GenericData.Record r = new GenericData.Record(v1);
        r.put("run_id", "old");
        r.put("timestamp", 5L);
        r.put("code_version", "abc");
        r.put("host", "h");
        r.put("cpu", "c");
        r.put("cores", 2);
        r.put("jdk", "25");
        r.put("vector_bits", 256);
        r.put("model_hash", "mh");
        r.put("config_id", configId);
        r.put("format", "q4_0");
        r.put("group_size", 32);
        r.put("tensor_overrides", Map.of("attn", "q8_0"));
        r.put("imatrix", "cal");
        r.put("kl_mean", 0.25);
        r.put("threads", 2);
        GenericData.Record batch = new GenericData.Record(v1.getField("batch_tps").schema().getTypes().get(1).getElementType());
        batch.put("batch", 4);
        batch.put("tps", 90.0);
        r.put("batch_tps", List.of(batch));
        r.put("status", "ok");
        return r;
    }

    private static void write(Path file, Schema schema, List<GenericRecord> rows) throws IOException {
        Files.createDirectories(file.getParent());
        try (ParquetWriter<GenericRecord> w = AvroParquetWriter.<GenericRecord>builder(new LocalOutputFile(file))
                .withConf(new PlainParquetConfiguration()).withSchema(schema).withDataModel(GenericData.get()).build()) {
            for (GenericRecord r : rows) {
                w.write(r);
            }
        }
    }

    @Test
    void version1RowsReadAsF32Activations() throws IOException {
        Schema v1 = v1();
        assertNull(v1.getField("activations"), "the fixture is the schema before the column");
        write(dir.resolve("runs/old/results.parquet"), v1, List.of(v1Row(v1, "a")));
        ResultRow r = ResultFiles.readRows(List.of(dir)).get(0);
        assertEquals("f32", r.activations());
        assertEquals("q4_0/32+attn=q8_0 imx=cal t2", r.label());
        assertEquals(0.25, r.klMean());
        assertEquals(Map.of(4, 90.0), r.batchTps());
    }

    @Test
    void aVersion1JournalIsRecoveredIntoTheCurrentSchema() throws IOException {
        Schema v1 = v1();
        ResultStore store = new ResultStore(dir);
        write(store.journalDir("killed").resolve("a.parquet"), v1, List.of(v1Row(v1, "a")));
        write(store.journalDir("killed").resolve("b.parquet"), v1, List.of(v1Row(v1, "b")));

        assertEquals(List.of("killed"), store.recoverInterrupted());
        List<GenericRecord> records = ResultFiles.readRecords(store.runDir("killed").resolve(ResultStore.RESULT_FILE));
        assertEquals(2, records.size());
        for (GenericRecord r : records) {
            assertEquals(ResultSchema.VERSION, ((Number) r.getSchema().getObjectProp("qlab.schema.version")).intValue());
            // Columns by name, not by position: every column after the new one is still in its place.
            assertNull(r.get("activations"));
            assertEquals("cal", r.get("imatrix").toString());
            assertEquals(0.25, r.get("kl_mean"));
            assertEquals(2, r.get("threads"));
            assertEquals("ok", r.get("status").toString());
        }
        ResultRow row = ResultRow.from(records.get(0));
        assertEquals("f32", row.activations());
        assertEquals(Map.of(4, 90.0), row.batchTps());
    }
}
