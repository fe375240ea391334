package qlab.engine.gguf;

import java.util.List;
import qlab.engine.tokenizer.Tokenizer;

/** The tokenizer of a GGUF file, from its {@code tokenizer.ggml.*} metadata. */
public final class GgufTokenizer {

    public static final String MODEL = "tokenizer.ggml.model";
    public static final String PRE = "tokenizer.ggml.pre";
    public static final String TOKENS = "tokenizer.ggml.tokens";
    public static final String TOKEN_TYPE = "tokenizer.ggml.token_type";
    public static final String MERGES = "tokenizer.ggml.merges";
    public static final String CHAT_TEMPLATE = "tokenizer.chat_template";

    private GgufTokenizer() {}

    /** Whether the file carries a tokenizer at all. */
    public static boolean present(GgufFile f) {
        return f.has(MODEL) && f.has(TOKENS);
    }

    public static Tokenizer read(GgufFile f) {
        return Tokenizer.fromGgml(f.source(), f.string(MODEL), f.strings(TOKENS),
                f.has(TOKEN_TYPE) ? f.ints(TOKEN_TYPE) : null,
                f.has(MERGES) ? f.strings(MERGES) : List.of(),
                f.has(PRE) ? f.string(PRE) : "default");
    }
}
