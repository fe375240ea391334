package qlab.engine.sampling;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import qlab.engine.QlabException;

class GenerationDefaultsTest {
    // Shaped like the generation_config.json that Qwen2.5-Instruct models ship.
    private static final String QWEN = """
            {
              "bos_token_id": 151643,
              "pad_token_id": 151643,
              "do_sample": true,
              "eos_token_id": [151645, 151643],
              "repetition_penalty": 1.1,
              "temperature": 0.7,
              "top_p": 0.8,
              "top_k": 20,
              "transformers_version": "4.37.0"
            }
            """;

    @TempDir
    Path dir;

    private Path write(String json) throws IOException {
        return Files.writeString(dir.resolve(GenerationDefaults.FILE_NAME), json);
    }

    @Test
    void readsQwenDefaultsAndIgnoresUnknownFields() throws IOException {
        write(QWEN);
        GenerationDefaults d = GenerationDefaults.readFromModelDirectory(dir).orElseThrow();
        assertEquals(Boolean.TRUE, d.doSample());
        assertEquals(0.7, d.temperature());
        assertEquals(20, d.topK());
        assertEquals(0.8, d.topP());
        assertEquals(1.1, d.repetitionPenalty());
        assertEquals(List.of(151645, 151643), d.eosTokenIds());
        assertEquals(151643, d.bosTokenId());
        assertEquals(151643, d.padTokenId());
        assertNull(d.minP());
        assertNull(d.maxNewTokens());
    }

    @Test
    void singleEosIdAndNullFields() throws IOException {
        write("{\"eos_token_id\": 2, \"pad_token_id\": null, \"max_new_tokens\": 64, \"min_p\": 0.05}");
        GenerationDefaults d = GenerationDefaults.read(dir.resolve(GenerationDefaults.FILE_NAME));
        assertEquals(List.of(2), d.eosTokenIds());
        assertNull(d.padTokenId());
        assertNull(d.doSample());
        assertEquals(64, d.maxNewTokens());
        assertEquals(0.05, d.minP());
    }

    @Test
    void missingFileIsEmptyForADirectoryAndAnErrorForAFile() {
        assertTrue(GenerationDefaults.readFromModelDirectory(dir).isEmpty());
        QlabException e = assertThrows(QlabException.class,
                () -> GenerationDefaults.read(dir.resolve(GenerationDefaults.FILE_NAME)));
        assertTrue(e.getMessage().contains("generation_config.json: file not found"), e.getMessage());
    }

    @Test
    void wrongTypesGiveOneLineNamingFileAndField() throws IOException {
        assertError("{\"temperature\": \"0.7\"}", "field \"temperature\" must be a number >= 0, got string \"0.7\"");
        assertError("{\"temperature\": -1}", "field \"temperature\" must be a number >= 0");
        assertError("{\"top_k\": 20.5}", "field \"top_k\" must be an integer >= 0, got number 20.5");
        assertError("{\"top_p\": 1.5}", "field \"top_p\" must be a number in [0, 1]");
        assertError("{\"repetition_penalty\": 0}", "field \"repetition_penalty\" must be a number > 0");
        assertError("{\"do_sample\": \"yes\"}", "field \"do_sample\" must be true or false");
        assertError("{\"eos_token_id\": [151645, \"x\"]}", "field \"eos_token_id\" must be an integer >= 0 or a list");
        assertError("{\"eos_token_id\": 1e40}", "field \"eos_token_id\" must be an integer >= 0 or a list");
        assertError("{\"bos_token_id\": 99999999999}", "field \"bos_token_id\" must be an integer >= 0");
        assertError("[1, 2]", "expected a JSON object at the top level");
        assertError("{\"temperature\": 0.7,", "not valid JSON at line 1");
    }

    private void assertError(String json, String expected) throws IOException {
        Path file = write(json);
        QlabException e = assertThrows(QlabException.class, () -> GenerationDefaults.read(file));
        assertTrue(e.getMessage().startsWith(file + ": "), e.getMessage());
        assertTrue(e.getMessage().contains(expected), e.getMessage());
        assertFalse(e.getMessage().contains("\n"), "one line: " + e.getMessage());
    }

    @Test
    void defaultsFillOnlyWhatWasNotGiven() throws IOException {
        GenerationDefaults d = GenerationDefaults.read(write(QWEN));
        SamplingOptions nothing = SamplingOptions.none();
        assertEquals(new SamplingConfig(0.7, 20, 0.8, 0.0, 1.1, 5), d.applyTo(nothing).toConfig(5));

        SamplingOptions explicit = new SamplingOptions(null, 0.2, null, null, null, 1.0, 100);
        SamplingOptions merged = d.applyTo(explicit);
        assertEquals(new SamplingOptions(null, 0.2, 20, 0.8, null, 1.0, 100), merged);
        assertEquals(new SamplingConfig(0.2, 20, 0.8, 0.0, 1.0, 9), merged.toConfig(9));
        assertEquals("model defaults (" + d.source() + "): applied top_k=20 top_p=0.8; explicit temperature=0.2"
                + " repetition_penalty=1 max_new_tokens=100 kept", d.describeApplied(explicit));
        assertEquals("model defaults (" + d.source() + "): applied do_sample=true temperature=0.7 top_k=20 top_p=0.8"
                + " repetition_penalty=1.1", d.describeApplied(nothing));
    }

    @Test
    void explicitTemperatureZeroIsGreedyEvenWhenTheModelSamples() throws IOException {
        GenerationDefaults d = GenerationDefaults.read(write(QWEN));
        SamplingConfig config = d.applyTo(new SamplingOptions(null, 0.0, null, null, null, null, null)).toConfig(1);
        assertTrue(config.isGreedy());
        assertEquals(1.1, config.repetitionPenalty(), "the penalty still applies to greedy decoding");
    }

    @Test
    void fileThatDoesNotSampleGivesGreedyUnlessATemperatureIsGiven() throws IOException {
        GenerationDefaults d = GenerationDefaults.read(write("{\"do_sample\": false, \"temperature\": 0.6}"));
        assertTrue(d.applyTo(SamplingOptions.none()).toConfig(1).isGreedy());
        SamplingConfig explicit = d.applyTo(new SamplingOptions(null, 0.9, null, null, null, null, null)).toConfig(1);
        assertEquals(0.9, explicit.temperature());
        assertEquals("model defaults (" + d.source() + "): none applied; explicit temperature=0.9 kept",
                d.describeApplied(new SamplingOptions(null, 0.9, null, null, null, null, null)));
    }

    @Test
    void negativeMaxNewTokensIsRejected() {
        QlabException e = assertThrows(QlabException.class,
                () -> new SamplingOptions(null, null, null, null, null, null, -1));
        assertEquals("sampling: \"max_new_tokens\" must be >= 0, got -1", e.getMessage());
    }

    @Test
    void optionsWithoutDefaults() {
        assertTrue(SamplingOptions.none().toConfig(3).isGreedy());
        assertEquals(new SamplingConfig(1.0, 40, 1.0, 0.0, 1.0, 3),
                new SamplingOptions(true, null, 40, null, null, null, null).toConfig(3));
        assertEquals(new SamplingConfig(0.8, 0, 1.0, 0.0, 1.0, 3),
                new SamplingOptions(null, 0.8, null, null, null, null, null).toConfig(3));
    }
}
