package qlab.engine.sampling;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import qlab.engine.QlabException;
import qlab.engine.util.JsonErrors;

/**
 * A model's {@code generation_config.json}: the decoding defaults its authors ship (Qwen2.5-Instruct models set
 * do_sample, temperature, top_k, top_p, repetition_penalty and two EOS ids). Every field is {@code null}
 * when absent or JSON {@code null}; {@link #eosTokenIds} is then empty. Fields qlab does not use are ignored, as
 * this is a defaults file, not a specification; a used field of the wrong type or range is an error.
 *
 * <p>Only values present in the file are applied. transformers would also fill in its own library defaults
 * (for instance top_k = 50 when sampling and the file has no top_k); qlab does not, so a missing filter is off.
 */
public record GenerationDefaults(Path source, Boolean doSample, Double temperature, Integer topK, Double topP,
                                 Double minP, Double repetitionPenalty, Integer maxNewTokens,
                                 List<Integer> eosTokenIds, Integer bosTokenId, Integer padTokenId) {

    public static final String FILE_NAME = "generation_config.json";

    private static final ObjectMapper JSON = new ObjectMapper();

    public GenerationDefaults {
        eosTokenIds = List.copyOf(eosTokenIds);
    }

    /** The model directory's generation_config.json, or empty if the directory has none. */
    public static Optional<GenerationDefaults> readFromModelDirectory(Path modelDirectory) {
        Path file = modelDirectory.resolve(FILE_NAME);
        return Files.isRegularFile(file) ? Optional.of(read(file)) : Optional.empty();
    }

    public static GenerationDefaults read(Path file) {
        JsonNode root;
        try {
            root = JSON.readTree(Files.readAllBytes(file));
        } catch (NoSuchFileException e) {
            throw new QlabException(file + ": file not found");
        } catch (JacksonException e) {
            throw new QlabException(file + ": not valid JSON" + JsonErrors.where(e) + ": " + JsonErrors.why(e));
        } catch (IOException e) {
            throw new QlabException(file + ": cannot read: " + e.getMessage(), e);
        }
        if (root == null || !root.isObject()) {
            throw new QlabException(file + ": expected a JSON object at the top level");
        }
        Fields fields = new Fields(file, root);
        return new GenerationDefaults(file,
                fields.bool("do_sample"),
                fields.number("temperature", 0.0, Double.MAX_VALUE, "a number >= 0"),
                fields.integer("top_k", 0),
                fields.number("top_p", 0.0, 1.0, "a number in [0, 1]"),
                fields.number("min_p", 0.0, 1.0, "a number in [0, 1]"),
                fields.number("repetition_penalty", Double.MIN_NORMAL, Double.MAX_VALUE, "a number > 0"),
                fields.integer("max_new_tokens", 0),
                fields.tokenIds("eos_token_id"),
                fields.integer("bos_token_id", 0),
                fields.integer("pad_token_id", 0));
    }

    /** The sampling-related values of this file, as options. */
    public SamplingOptions asOptions() {
        return new SamplingOptions(doSample, temperature, topK, topP, minP, repetitionPenalty, maxNewTokens);
    }

    /**
     * {@code explicit} with this file's values filled in where nothing was given. An explicit temperature also
     * decides whether to sample (above 0: sample, 0: greedy), so the file's {@code do_sample} is then not applied.
     */
    public SamplingOptions applyTo(SamplingOptions explicit) {
        boolean sampleDecided = explicit.doSample() != null || explicit.temperature() != null;
        return new SamplingOptions(
                sampleDecided ? explicit.doSample() : doSample,
                orDefault(explicit.temperature(), temperature),
                orDefault(explicit.topK(), topK),
                orDefault(explicit.topP(), topP),
                orDefault(explicit.minP(), minP),
                orDefault(explicit.repetitionPenalty(), repetitionPenalty),
                orDefault(explicit.maxNewTokens(), maxNewTokens));
    }

    /**
     * One line saying which defaults were applied and which explicit values won, e.g.
     * {@code model defaults (…/generation_config.json): applied do_sample=true top_k=20 top_p=0.8
     * repetition_penalty=1.05; explicit temperature=0.2 kept}.
     */
    public String describeApplied(SamplingOptions explicit) {
        SamplingOptions merged = applyTo(explicit);
        SamplingOptions applied = new SamplingOptions(
                explicit.doSample() == null ? merged.doSample() : null,
                explicit.temperature() == null ? merged.temperature() : null,
                explicit.topK() == null ? merged.topK() : null,
                explicit.topP() == null ? merged.topP() : null,
                explicit.minP() == null ? merged.minP() : null,
                explicit.repetitionPenalty() == null ? merged.repetitionPenalty() : null,
                explicit.maxNewTokens() == null ? merged.maxNewTokens() : null);
        String appliedText = applied.describe();
        String explicitText = explicit.describe();
        StringBuilder line = new StringBuilder("model defaults (").append(source).append("): ");
        line.append(appliedText.isEmpty() ? "none applied" : "applied " + appliedText);
        if (!explicitText.isEmpty()) {
            line.append("; explicit ").append(explicitText).append(" kept");
        }
        return line.toString();
    }

    private static <T> T orDefault(T explicit, T fallback) {
        return explicit != null ? explicit : fallback;
    }

    /** Typed access to the top-level fields, with one-line errors naming the file and the field. */
    private record Fields(Path file, JsonNode root) {

        private JsonNode get(String name) {
            JsonNode node = root.get(name);
            return node == null || node.isNull() ? null : node;
        }

        private QlabException wrongType(String name, String expected, JsonNode node) {
            return new QlabException(file + ": field \"" + name + "\" must be " + expected + ", got "
                    + describe(node));
        }

        Boolean bool(String name) {
            JsonNode node = get(name);
            if (node == null) {
                return null;
            }
            if (!node.isBoolean()) {
                throw wrongType(name, "true or false", node);
            }
            return node.booleanValue();
        }

        Double number(String name, double min, double max, String expected) {
            JsonNode node = get(name);
            if (node == null) {
                return null;
            }
            if (!node.isNumber() || !(node.doubleValue() >= min && node.doubleValue() <= max)) {
                throw wrongType(name, expected, node);
            }
            return node.doubleValue();
        }

        Integer integer(String name, int min) {
            JsonNode node = get(name);
            if (node == null) {
                return null;
            }
            return integerValue(name, node, min);
        }

        private int integerValue(String name, JsonNode node, int min) {
            if (!node.isIntegralNumber() || !node.canConvertToInt() || node.intValue() < min) {
                throw wrongType(name, "an integer >= " + min, node);
            }
            return node.intValue();
        }

        List<Integer> tokenIds(String name) {
            JsonNode node = get(name);
            List<Integer> ids = new ArrayList<>();
            if (node == null) {
                return ids;
            }
            if (node.isArray()) {
                for (JsonNode element : node) {
                    if (!element.isIntegralNumber() || !element.canConvertToInt() || element.intValue() < 0) {
                        throw wrongType(name, "an integer >= 0 or a list of them", node);
                    }
                    ids.add(element.intValue());
                }
                return ids;
            }
            if (!node.isIntegralNumber()) {
                throw wrongType(name, "an integer >= 0 or a list of them", node);
            }
            ids.add(integerValue(name, node, 0));
            return ids;
        }

        private static String describe(JsonNode node) {
            String text = node.toString();
            if (text.length() > 40) {
                text = text.substring(0, 37) + "...";
            }
            return node.getNodeType().toString().toLowerCase(Locale.ROOT) + " " + text;
        }
    }
}
