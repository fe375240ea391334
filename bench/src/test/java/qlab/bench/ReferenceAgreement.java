package qlab.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import qlab.engine.tokenizer.StreamingDecoder;
import qlab.engine.tokenizer.Tokenizer;

/**
 * Compares qlab's tokenizer with the Hugging Face Rust library (DJL binding) on an edited copy of a
 * tokenizer.json: ids (without and with the special tokens the post-processor adds), decodes with and without
 * special tokens, and streaming decodes, on seeded random
 * strings built from units chosen to exercise the components under test.
 */
final class ReferenceAgreement {
    private static final ObjectMapper JSON = new ObjectMapper();

    private ReferenceAgreement() {
    }

    /** {@code count} strings of 1 to {@code maxUnits} units drawn with {@code seed}. */
    static List<String> randomTexts(String[] units, long seed, int count, int maxUnits) {
        SplittableRandom random = new SplittableRandom(seed);
        List<String> texts = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            StringBuilder sb = new StringBuilder();
            int n = 1 + random.nextInt(maxUnits);
            for (int k = 0; k < n; k++) {
                sb.append(units[random.nextInt(units.length)]);
            }
            texts.add(sb.toString());
        }
        return texts;
    }

    /** Writes {@code original} edited by {@code edit} to {@code dir/name.json} and asserts agreement on every text. */
    static void assertAgreement(JsonNode original, Path dir, String name, Consumer<ObjectNode> edit, List<String> texts)
            throws IOException {
        ObjectNode variant = original.deepCopy();
        edit.accept(variant);
        Path file = dir.resolve(name + ".json");
        JSON.writeValue(file.toFile(), variant);
        Tokenizer ours = Tokenizer.load(file);
        try (HuggingFaceTokenizer reference = HuggingFaceTokenizer.builder().optTokenizerPath(file)
                .optAddSpecialTokens(false).optTruncation(false).optPadding(false).build()) {
            int agree = 0;
            for (String text : texts) {
                long[] expected = reference.encode(text, false, false).getIds();
                int[] actual = ours.encode(text);
                assertEquals(Arrays.toString(expected), Arrays.toString(actual), name + ": " + text);
                assertEquals(Arrays.toString(reference.encode(text, true, false).getIds()),
                        Arrays.toString(ours.encode(text, true)), name + " with special tokens: " + text);
                assertEquals(reference.decode(expected, false), ours.decode(actual, false), name + " decode: " + text);
                assertEquals(reference.decode(expected, true), ours.decode(actual, true), name + " decode skip: " + text);
                StreamingDecoder stream = ours.streamingDecoder(false);
                StringBuilder streamed = new StringBuilder();
                for (int id : actual) {
                    streamed.append(stream.accept(id));
                }
                assertEquals(ours.decode(actual, false), streamed.append(stream.finish()).toString(), name + " stream: " + text);
                agree++;
            }
            System.out.println("tokenizer vs HF, " + name + ": " + agree + "/" + texts.size() + " agree");
        }
    }
}
