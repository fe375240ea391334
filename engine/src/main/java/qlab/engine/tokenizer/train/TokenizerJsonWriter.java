package qlab.engine.tokenizer.train;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.core.util.Separators;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import qlab.engine.QlabException;

/**
 * Writes a {@link TrainedBpe} as the Hugging Face files a Qwen2 model directory carries:
 * {@code tokenizer.json} with the same components and field order as Qwen2's (NFC normalizer;
 * Split on {@link Qwen2PreTokenizer#REGEX} then ByteLevel without its own regex; ByteLevel
 * post-processor and decoder; a BPE model with merges as {@code [left, right]} pairs) and a
 * {@code tokenizer_config.json} naming the end-of-sequence and padding tokens.
 *
 * <p>Output is deterministic: fixed field order, two-space indentation, {@code \n} line ends,
 * non-ASCII characters written as themselves (UTF-8), as the Rust library writes them.
 */
public final class TokenizerJsonWriter {

    public static final String TOKENIZER_JSON = "tokenizer.json";
    public static final String TOKENIZER_CONFIG_JSON = "tokenizer_config.json";

    private TokenizerJsonWriter() {}

    /** The text of {@code tokenizer.json} for {@code bpe}. */
    public static String tokenizerJson(TrainedBpe bpe) {
        return render(g -> {
            g.writeStartObject();
            g.writeStringField("version", "1.0");
            g.writeNullField("truncation");
            g.writeNullField("padding");
            g.writeArrayFieldStart("added_tokens");
            for (String special : bpe.specialTokens()) {
                g.writeStartObject();
                g.writeNumberField("id", bpe.specialTokenId(special));
                g.writeStringField("content", special);
                writeAddedTokenFlags(g);
                g.writeEndObject();
            }
            g.writeEndArray();

            g.writeObjectFieldStart("normalizer");
            g.writeStringField("type", "NFC");
            g.writeEndObject();

            g.writeObjectFieldStart("pre_tokenizer");
            g.writeStringField("type", "Sequence");
            g.writeArrayFieldStart("pretokenizers");
            g.writeStartObject();
            g.writeStringField("type", "Split");
            g.writeObjectFieldStart("pattern");
            g.writeStringField("Regex", Qwen2PreTokenizer.REGEX);
            g.writeEndObject();
            g.writeStringField("behavior", "Isolated");
            g.writeBooleanField("invert", false);
            g.writeEndObject();
            g.writeStartObject();
            writeByteLevelFields(g);
            g.writeEndObject();
            g.writeEndArray();
            g.writeEndObject();

            g.writeObjectFieldStart("post_processor");
            writeByteLevelFields(g);
            g.writeEndObject();
            g.writeObjectFieldStart("decoder");
            writeByteLevelFields(g);
            g.writeEndObject();

            g.writeObjectFieldStart("model");
            g.writeStringField("type", "BPE");
            g.writeNullField("dropout");
            g.writeNullField("unk_token");
            g.writeStringField("continuing_subword_prefix", "");
            g.writeStringField("end_of_word_suffix", "");
            g.writeBooleanField("fuse_unk", false);
            g.writeBooleanField("byte_fallback", false);
            g.writeBooleanField("ignore_merges", false);
            g.writeObjectFieldStart("vocab");
            for (int id = 0; id < bpe.tokens().size(); id++) {
                g.writeNumberField(bpe.tokens().get(id), id);
            }
            g.writeEndObject();
            g.writeArrayFieldStart("merges");
            for (TrainedBpe.Merge m : bpe.merges()) {
                g.writeStartArray();
                g.writeString(bpe.tokens().get(m.left()));
                g.writeString(bpe.tokens().get(m.right()));
                g.writeEndArray();
            }
            g.writeEndArray();
            g.writeEndObject();
            g.writeEndObject();
        });
    }

    /**
     * The text of {@code tokenizer_config.json}: the fields transformers' Qwen2Tokenizer reads, with
     * {@code eosToken} and {@code padToken} (both must be special tokens of {@code bpe}). No chat
     * template is written: qlab renders ChatML in Java.
     */
    public static String tokenizerConfigJson(TrainedBpe bpe, String eosToken, String padToken, int modelMaxLength) {
        for (String[] field : new String[][] {{"eos_token", eosToken}, {"pad_token", padToken}}) {
            if (bpe.specialTokenId(field[1]) < 0) {
                throw new QlabException(TOKENIZER_CONFIG_JSON + ": field \"" + field[0] + "\" is \"" + field[1]
                        + "\", which is not one of the special tokens " + bpe.specialTokens());
            }
        }
        return render(g -> {
            g.writeStartObject();
            g.writeBooleanField("add_bos_token", false);
            g.writeBooleanField("add_prefix_space", false);
            g.writeObjectFieldStart("added_tokens_decoder");
            for (String special : bpe.specialTokens()) {
                g.writeObjectFieldStart(Integer.toString(bpe.specialTokenId(special)));
                g.writeStringField("content", special);
                g.writeBooleanField("lstrip", false);
                g.writeBooleanField("normalized", false);
                g.writeBooleanField("rstrip", false);
                g.writeBooleanField("single_word", false);
                g.writeBooleanField("special", true);
                g.writeEndObject();
            }
            g.writeEndObject();
            g.writeArrayFieldStart("additional_special_tokens");
            for (String special : bpe.specialTokens()) {
                if (!special.equals(padToken)) { // as Qwen2.5 lists them: all but the padding token
                    g.writeString(special);
                }
            }
            g.writeEndArray();
            g.writeNullField("bos_token");
            g.writeBooleanField("clean_up_tokenization_spaces", false);
            g.writeStringField("eos_token", eosToken);
            g.writeStringField("errors", "replace");
            g.writeNumberField("model_max_length", modelMaxLength);
            g.writeStringField("pad_token", padToken);
            g.writeBooleanField("split_special_tokens", false);
            g.writeStringField("tokenizer_class", "Qwen2Tokenizer");
            g.writeNullField("unk_token");
            g.writeEndObject();
        });
    }

    /** Writes {@code tokenizer.json} and {@code tokenizer_config.json} into {@code dir} (created if needed). */
    public static void write(Path dir, TrainedBpe bpe, String eosToken, String padToken, int modelMaxLength) {
        String config = tokenizerConfigJson(bpe, eosToken, padToken, modelMaxLength);
        writeFile(dir.resolve(TOKENIZER_JSON), tokenizerJson(bpe));
        writeFile(dir.resolve(TOKENIZER_CONFIG_JSON), config);
    }

    private static void writeFile(Path file, String text) {
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            Files.writeString(file, text, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new QlabException(file.getFileName() + ": cannot write " + file + ": " + e.getMessage(), e);
        }
    }

    private static void writeAddedTokenFlags(JsonGenerator g) throws IOException {
        g.writeBooleanField("single_word", false);
        g.writeBooleanField("lstrip", false);
        g.writeBooleanField("rstrip", false);
        g.writeBooleanField("normalized", false);
        g.writeBooleanField("special", true);
    }

    /** ByteLevel as Qwen2 configures it everywhere: the Split before it already did the regex work. */
    private static void writeByteLevelFields(JsonGenerator g) throws IOException {
        g.writeStringField("type", "ByteLevel");
        g.writeBooleanField("add_prefix_space", false);
        g.writeBooleanField("trim_offsets", false);
        g.writeBooleanField("use_regex", false);
    }

    private interface JsonBody {
        void write(JsonGenerator g) throws IOException;
    }

    private static String render(JsonBody body) {
        DefaultIndenter indenter = new DefaultIndenter("  ", "\n");
        DefaultPrettyPrinter printer = new DefaultPrettyPrinter()
                .withSeparators(Separators.createDefaultInstance()
                        .withObjectFieldValueSpacing(Separators.Spacing.AFTER));
        printer.indentObjectsWith(indenter);
        printer.indentArraysWith(indenter);
        StringWriter out = new StringWriter();
        try (JsonGenerator g = new JsonFactory().createGenerator(out)) {
            g.setPrettyPrinter(printer);
            body.write(g);
        } catch (IOException e) {
            throw new UncheckedIOException("writing JSON to a string", e);
        }
        return out.toString();
    }
}
