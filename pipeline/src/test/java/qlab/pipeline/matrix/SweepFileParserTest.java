package qlab.pipeline.matrix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import qlab.engine.QlabException;
import qlab.pipeline.KvCacheChoice;
import qlab.pipeline.ModelSpec;
import qlab.pipeline.SweepFiles;

class SweepFileParserTest {

    @TempDir
    Path dir;

    @Test
    void readsEveryPartOfTheSchema() throws IOException {
        SweepMatrix m = SweepFileParser.parse(SweepFiles.write(dir, "s.yaml", SweepFiles.MATRIX + """
                """.replace("- q4_8+attn=q8_0", "- q4_8+attn=q8_0")));
        assertEquals("test", m.name());
        assertEquals(ModelSpec.preset("tiny", 7), m.model());
        assertEquals(5, m.formats().size());
        assertEquals(new FormatChoice("q4_8", Map.of("attn", "q8_0")), m.formats().get(4));
        assertEquals(List.of(32, 128), m.groupSizes());
        assertEquals(List.of(1, 2), m.threads());
        assertEquals(List.of("none", "cal"), m.imatrices());
        assertEquals(List.of(Activations.F32), m.activations(), "no activations key: f32 only");
        assertEquals(List.of(dir.resolve("calib.txt").toString()), m.calibration().get("cal").files());
        assertEquals(dir.resolve("eval.txt").toString(), m.eval().textPath());
        assertEquals(64, m.eval().ctx());
        assertEquals(256, m.eval().tokens());
        assertEquals(Set.of(Measurement.QUALITY, Measurement.THROUGHPUT, Measurement.BATCH), m.measurements());
        assertEquals(16, m.throughput().prefillTokens());
        assertEquals(8, m.throughput().decodeTokens());
        assertEquals(3, m.throughput().repeats());
        assertEquals(List.of(1, 4), m.throughput().batchSizes());
    }

    @Test
    void structuredAndShortMixesAreTheSame() throws IOException {
        String yaml = SweepFiles.MATRIX.replace("  - q4_8+attn=q8_0\n",
                "  - q4_8+attn=q8_0+head=q8_0\n  - base: q4_8\n    overrides: {head: q8_0, attn: q8_0}\n");
        SweepMatrix m = SweepFileParser.parse(SweepFiles.write(dir, "s.yaml", yaml));
        assertEquals(m.formats().get(4), m.formats().get(5));
    }

    /** MATRIX with an {@code activations} line after the imatrix line, i.e. on line 15. */
    private static String withActivations(String value) {
        return SweepFiles.MATRIX.replace("imatrix: [none, cal]\n", "imatrix: [none, cal]\nactivations: " + value + "\n");
    }

    @Test
    void activationsAreAnOptionalAxis() throws IOException {
        SweepMatrix both = SweepFileParser.parse(SweepFiles.write(dir, "s.yaml", withActivations("[f32, int8]")));
        assertEquals(List.of(Activations.F32, Activations.INT8), both.activations());
        SweepMatrix once = SweepFileParser.parse(SweepFiles.write(dir, "s.yaml", withActivations("[int8, int8]")));
        assertEquals(List.of(Activations.INT8), once.activations());
    }

    @Test
    void aModelDirectoryInsteadOfAPreset() throws IOException {
        java.nio.file.Files.createDirectories(dir.resolve("models/m"));
        String yaml = SweepFiles.MATRIX.replace("  preset: tiny\n  seed: 7\n", "  path: models/m\n");
        SweepMatrix m = SweepFileParser.parse(SweepFiles.write(dir, "s.yaml", yaml));
        assertEquals(ModelSpec.directory(dir.resolve("models/m").toString()), m.model());
    }

    // ---- malformed files: one line, naming file, line and key ----

    private String error(String yaml) throws IOException {
        Path f = SweepFiles.write(dir, "bad.yaml", yaml);
        return assertThrows(QlabException.class, () -> SweepFileParser.parse(f)).getMessage();
    }

    @Test
    void unknownFormatNamesLineAndKey() throws IOException {
        String msg = error(SweepFiles.MATRIX.replace("  - q4_0\n", "  - q7_k\n"));
        assertEquals("bad.yaml:9: key \"formats[2]\": unknown format \"q7_k\" (known: "
                + String.join(", ", qlab.quant.Formats.names()) + ")", msg);
    }

    @Test
    void groupSizeThatIsNotANumber() throws IOException {
        assertEquals("bad.yaml:12: key \"group_sizes[1]\": expected an integer, got \"big\"",
                error(SweepFiles.MATRIX.replace("[32, 128]", "[32, big]")));
    }

    @Test
    void negativeThreads() throws IOException {
        assertEquals("bad.yaml:13: key \"threads[0]\": expected a positive integer, got -1",
                error(SweepFiles.MATRIX.replace("threads: [1, 2]", "threads: [-1]")));
    }

    @Test
    void misspelledKey() throws IOException {
        assertEquals("bad.yaml:13: key \"thread\": unknown key (expected one of: activations, calibration, evaluation, "
                        + "formats, group_sizes, imatrix, kv_cache, measurements, mode, model, name, qlab_sweep, sensitivity, threads, "
                        + "throughput)",
                error(SweepFiles.MATRIX.replace("threads: [1, 2]", "thread: [1, 2]")));
    }

    @Test
    void missingSection() throws IOException {
        String msg = error(SweepFiles.MATRIX.replace("model:\n  preset: tiny\n  seed: 7\n", ""));
        assertEquals("bad.yaml:1: key \"model\": is missing", msg);
    }

    @Test
    void missingNestedKey() throws IOException {
        assertEquals("bad.yaml:17: key \"evaluation.ctx\": is missing",
                error(SweepFiles.MATRIX.replace("  ctx: 64\n", "")));
    }

    @Test
    void syntaxError() throws IOException {
        String msg = error(SweepFiles.MATRIX.replace("[32, 128]", "[32, 128"));
        assertEquals(true, msg.startsWith("bad.yaml:13: malformed YAML: "), msg);
        assertEquals(1, msg.lines().count());
    }

    @Test
    void duplicateKey() throws IOException {
        assertEquals("bad.yaml:14: key \"threads\" appears twice",
                error(SweepFiles.MATRIX.replace("threads: [1, 2]", "threads: [1, 2]\nthreads: [4]")));
    }

    @Test
    void importanceMatrixWithoutCalibrationSet() throws IOException {
        assertEquals("bad.yaml:14: key \"imatrix[1]\": no calibration set named \"wiki\" (defined: cal)",
                error(SweepFiles.MATRIX.replace("[none, cal]", "[none, wiki]")));
    }

    @Test
    void unknownActivations() throws IOException {
        assertEquals("bad.yaml:15: key \"activations[1]\": unknown activation type \"fp16\" (known: f32, int8)",
                error(withActivations("[f32, fp16]")));
    }

    /** MATRIX with a {@code kv_cache} line after the imatrix line, i.e. on line 15. */
    private static String withKvCache(String value) {
        return SweepFiles.MATRIX.replace("imatrix: [none, cal]\n", "imatrix: [none, cal]\nkv_cache: " + value + "\n");
    }

    @Test
    void kvCacheIsAnOptionalAxisOfTypesOrPairs() throws IOException {
        assertEquals(List.of(KvCacheChoice.F32), SweepFileParser.parse(SweepFiles.write(dir, "s.yaml", SweepFiles.MATRIX))
                .kvCaches(), "no kv_cache key: f32 only");
        SweepMatrix m = SweepFileParser.parse(SweepFiles.write(dir, "s.yaml",
                withKvCache("[f32, Q8_0, {k: q8_0, v: q4_0}, q8_0]")));
        assertEquals(List.of(KvCacheChoice.F32, new KvCacheChoice("q8_0", "q8_0"), new KvCacheChoice("q8_0", "q4_0")),
                m.kvCaches(), "names lower-cased, each kept once, in file order");
        assertEquals("k=q8_0,v=q4_0", m.kvCaches().get(2).yamlName());
        assertEquals(m.kvCaches().get(2), KvCacheChoice.parse("k=q8_0,v=q4_0"));
        assertEquals(m.kvCaches().get(1), KvCacheChoice.parse("q8_0"));
    }

    @Test
    void unknownKvCacheTypes() throws IOException {
        assertEquals("bad.yaml:15: key \"kv_cache[1]\": unknown KV cache type \"q4_k\" (known: f32, f16, bf16, q8_0, "
                + "q4_0, q4_1, q5_0, q5_1, iq4_nl)", error(withKvCache("[f32, q4_k]")));
        assertEquals("bad.yaml:15: key \"kv_cache[0].v\": unknown KV cache type \"int4\" (known: f32, f16, bf16, q8_0, "
                + "q4_0, q4_1, q5_0, q5_1, iq4_nl)", error(withKvCache("[{k: q8_0, v: int4}]")));
        assertEquals("bad.yaml:15: key \"kv_cache[0].v\": is missing", error(withKvCache("[{k: q8_0}]")));
        assertEquals("bad.yaml:15: key \"kv_cache\": expected a list", error(withKvCache("q8_0")));
    }

    @Test
    void activationsThatAreNotAList() throws IOException {
        assertEquals("bad.yaml:15: key \"activations\": expected a list", error(withActivations("int8")));
        assertEquals("bad.yaml:15: key \"activations\": expected a list", error(withActivations("")));
    }

    @Test
    void emptyActivations() throws IOException {
        assertEquals("bad.yaml:15: key \"activations\": the list is empty", error(withActivations("[]")));
    }

    @Test
    void unknownTensorClassInAMix() throws IOException {
        String msg = error(SweepFiles.MATRIX.replace("q4_8+attn=q8_0", "q4_8+atn=q8_0"));
        assertEquals(true, msg.startsWith("bad.yaml:11: key \"formats[4]\": unknown tensor class \"atn\""), msg);
    }

    @Test
    void unknownPreset() throws IOException {
        assertEquals("bad.yaml:4: key \"model.preset\": unknown preset \"huge\" (known: tiny, tiny-llama, tiny-qwen3, small, qwen2.5-0.5b, llama3.2-1b, qwen3-0.6b)",
                error(SweepFiles.MATRIX.replace("preset: tiny", "preset: huge")));
    }

    @Test
    void missingTextFile() throws IOException {
        String msg = error(SweepFiles.MATRIX.replace("text: eval.txt", "text: nowhere.txt"));
        assertEquals(true, msg.startsWith("bad.yaml:18: key \"evaluation.text\": no such file: "), msg);
    }

    @Test
    void throughputSettingsRequiredWhenThroughputIsMeasured() throws IOException {
        String yaml = SweepFiles.MATRIX.substring(0, SweepFiles.MATRIX.indexOf("throughput:\n  prefill"));
        assertEquals("bad.yaml:1: key \"throughput\": is missing (measurements include throughput)", error(yaml));
    }

    @Test
    void unsupportedSchemaVersion() throws IOException {
        assertEquals("bad.yaml:1: key \"qlab_sweep\": schema version 2 is not supported (this qlab reads 1)",
                error(SweepFiles.MATRIX.replace("qlab_sweep: 1", "qlab_sweep: 2")));
    }

    @Test
    void topLevelMustBeAMapping() throws IOException {
        assertEquals("bad.yaml:1: expected a mapping at the top of the file", error("- just\n- a list\n"));
    }

    // ---- mode: sensitivity ----

    private static final String SENSITIVITY = qlab.pipeline.beam.SensitivitySweepTest.SENSITIVITY;

    @Test
    void sensitivityExpandsToTheReferenceAndEachGroupInEachCandidate() throws IOException {
        SweepMatrix m = SweepFileParser.parse(SweepFiles.write(dir, "s.yaml", SENSITIVITY.replace("grouping: kind", "grouping: tensor")));
        assertEquals(new Sensitivity("f32", Sensitivity.Grouping.TENSOR), m.sensitivity());
        List<FormatChoice> mixes = MatrixExpansion.mixes(m);
        // emb, then 2 layers x 7 matrices (the tiny preset ties its head), x {q8_0, q4_0}, after the reference.
        assertEquals(1 + 15 * 2, mixes.size());
        assertEquals(new FormatChoice("f32", Map.of()), mixes.get(0));
        assertEquals(new FormatChoice("f32", Map.of("L1.down", "q4_0")), mixes.getLast());
        assertEquals(31, MatrixExpansion.expand(m).runnable());
        SweepMatrix byLayer = SweepFileParser.parse(SweepFiles.write(dir, "l.yaml", SENSITIVITY.replace("grouping: kind", "grouping: layer")));
        assertEquals(1 + 3 * 2, MatrixExpansion.mixes(byLayer).size());
        SweepMatrix ordinary = SweepFileParser.parse(SweepFiles.write(dir, "o.yaml", SweepFiles.MATRIX));
        assertEquals(null, ordinary.sensitivity());
    }

    @Test
    void sensitivityMeasuresQualityOnly() throws IOException {
        assertEquals("bad.yaml:17: key \"measurements\": must be [quality] in mode: sensitivity",
                error(SENSITIVITY.replace("measurements: [quality]", "measurements: [quality, throughput]\nthroughput: {decode_tokens: 4, repeats: 1, prefill_tokens: 4}")));
    }

    @Test
    void sensitivityAxesHaveOneValueAndFormatsNoMixes() throws IOException {
        assertEquals("bad.yaml:11: key \"group_sizes\": must have one value in mode: sensitivity, not 2",
                error(SENSITIVITY.replace("group_sizes: [32]", "group_sizes: [32, 64]")));
        assertEquals("bad.yaml:10: key \"formats[1]\": a sensitivity sweep's formats are single formats (each is tried on one group at a time)",
                error(SENSITIVITY.replace("formats: [q8_0, q4_0]", "formats: [q8_0, q4_0+attn=q8_0]")));
    }

    @Test
    void unknownGroupingAndMode() throws IOException {
        assertEquals("bad.yaml:9: key \"sensitivity.grouping\": unknown grouping \"row\" (known: tensor, kind, layer)",
                error(SENSITIVITY.replace("grouping: kind", "grouping: row")));
        assertEquals("bad.yaml:3: key \"mode\": unknown mode \"sensitive\" (known: sweep, sensitivity)",
                error(SENSITIVITY.replace("mode: sensitivity", "mode: sensitive")));
        assertEquals(true, error(SENSITIVITY.replace("mode: sensitivity", "mode: sweep"))
                .startsWith("bad.yaml:7: key \"sensitivity\": is set but mode is not sensitivity"));
    }
}
