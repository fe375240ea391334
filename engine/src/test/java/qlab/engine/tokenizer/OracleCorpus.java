package qlab.engine.tokenizer;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Reads the tokenizer oracles' JSON-lines files ({@code corpus.jsonl}, {@code decode_cases.jsonl}) and checks
 * a tokenizer against them: ids, plain and skip-special decodes, exact round trips, streaming decodes.
 */
final class OracleCorpus {
    private static final ObjectMapper JSON = new ObjectMapper();

    private OracleCorpus() {
    }

    /** Lines checked, the first few failures (empty when everything agrees), and the exact round trips. */
    record Result(int lines, List<String> failures, int roundTrips) {
    }

    static List<JsonNode> readJsonl(Path p) throws IOException {
        List<JsonNode> out = new ArrayList<>();
        for (String line : Files.readAllLines(p)) {
            if (!line.isBlank()) {
                out.add(JSON.readTree(line));
            }
        }
        return out;
    }

    static int[] ints(JsonNode array) {
        int[] out = new int[array.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = array.get(i).asInt();
        }
        return out;
    }

    /** Encodes every text, decodes every id list (with and without special tokens) and round-trips the exact ones. */
    static Result check(Tokenizer tokenizer, Path corpusFile) throws IOException {
        List<JsonNode> corpus = readJsonl(corpusFile);
        List<String> failures = new ArrayList<>();
        int roundTrips = 0;
        for (JsonNode line : corpus) {
            String where = "id " + line.get("id") + " (" + line.get("family").asText() + ")";
            String text = line.get("text").asText();
            int[] expected = ints(line.get("ids"));
            int[] actual = tokenizer.encode(text);
            if (!Arrays.equals(expected, actual)) {
                failures.add(where + ": expected " + Arrays.toString(expected) + " got " + Arrays.toString(actual));
            }
            String decoded = line.has("decoded") ? line.get("decoded").asText() : text;
            String decodedSkip = line.has("decoded_skip_special_tokens")
                    ? line.get("decoded_skip_special_tokens").asText() : decoded;
            String plain = tokenizer.decode(expected, false);
            if (!decoded.equals(plain)) {
                failures.add(where + ": decodes to " + JSON.writeValueAsString(plain) + ", expected "
                        + JSON.writeValueAsString(decoded));
            }
            String skipped = tokenizer.decode(expected, true);
            if (!decodedSkip.equals(skipped)) {
                failures.add(where + ": skip-special decodes to " + JSON.writeValueAsString(skipped) + ", expected "
                        + JSON.writeValueAsString(decodedSkip));
            }
            if (line.get("roundtrip_exact").asBoolean() && text.equals(tokenizer.decode(actual, false))) {
                roundTrips++;
            }
        }
        System.out.println(corpusFile + ": " + corpus.size() + " lines, " + failures.size() + " failures, "
                + roundTrips + " round trips");
        return new Result(corpus.size(), failures.subList(0, Math.min(5, failures.size())), roundTrips);
    }

    /** Asserts every decode case, plain and skipping special tokens; returns how many were checked. */
    static int checkDecodeCases(Tokenizer tokenizer, Path casesFile) throws IOException {
        int passed = 0;
        for (JsonNode c : readJsonl(casesFile)) {
            int[] ids = ints(c.get("ids"));
            assertEquals(c.get("decoded").asText(), tokenizer.decode(ids, false), "decode case " + c.get("id"));
            assertEquals(c.get("decoded_skip_special_tokens").asText(), tokenizer.decode(ids, true),
                    "decode case " + c.get("id") + " (skip special)");
            passed++;
        }
        return passed;
    }

    /** Asserts the model manifest's prompt ids and decoded greedy continuations; returns how many prompts. */
    static int checkManifest(Tokenizer tokenizer, Path manifestFile) throws IOException {
        JsonNode manifest = JSON.readTree(manifestFile.toFile());
        int prompts = 0;
        for (JsonNode p : manifest.get("prompts")) {
            String name = p.get("name").asText();
            org.junit.jupiter.api.Assertions.assertArrayEquals(ints(p.get("input_ids")),
                    tokenizer.encode(p.get("text").asText()), name);
            assertEquals(p.get("greedy_continuation_decoded").asText(),
                    tokenizer.decode(ints(p.get("greedy_continuation")), false), name + " continuation");
            prompts++;
        }
        return prompts;
    }

    /** Asserts that each chat case's rendered text encodes to its expected ids; returns how many cases. */
    static int checkChatIds(Tokenizer tokenizer, Path casesFile) throws IOException {
        List<JsonNode> cases = readJsonl(casesFile);
        for (JsonNode c : cases) {
            org.junit.jupiter.api.Assertions.assertArrayEquals(ints(c.get("expected_ids")),
                    tokenizer.encode(c.get("expected_text").asText()), c.get("name").asText());
        }
        return cases.size();
    }

    /** Asserts that streaming decodes of every id list equal the full decode; returns how many lists were checked. */
    static int checkStreaming(Tokenizer tokenizer, Path... files) throws IOException {
        int lists = 0;
        for (Path file : files) {
            for (JsonNode line : readJsonl(file)) {
                int[] ids = ints(line.get("ids"));
                for (boolean skip : new boolean[] {false, true}) {
                    StreamingDecoder stream = tokenizer.streamingDecoder(skip);
                    StringBuilder text = new StringBuilder();
                    for (int id : ids) {
                        text.append(stream.accept(id));
                    }
                    text.append(stream.finish());
                    assertEquals(tokenizer.decode(ids, skip), text.toString(), file.getFileName() + " " + line.get("id"));
                }
                lists++;
            }
        }
        return lists;
    }
}
