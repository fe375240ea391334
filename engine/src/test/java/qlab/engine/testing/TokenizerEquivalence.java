package qlab.engine.testing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import qlab.engine.tokenizer.Tokenizer;

/**
 * Checks that a tokenizer read back from a GGUF is the one it was exported from: same size, same
 * token texts, same ids for varied text (special tokens, placeholder look-alikes included), same
 * text for varied ids (ids past the tokenizer, where a GGUF has its placeholders, included).
 */
public final class TokenizerEquivalence {

    /** Text that exercises the pre-tokenizers, added tokens of Qwen and Llama 3, and placeholder names. */
    public static final List<String> TEXTS = List.of(
            "Hello world, 12345 times: ünïcode\n\n  spaced",
            "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
            "<|fim_prefix|>def f():<|fim_suffix|>\n    return 1<|fim_middle|>",
            "<think>\nplan\n</think>\n\n<tool_call>{\"name\": \"x\"}</tool_call>",
            "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|end_of_text|>",
            "[PAD151700] [PAD5][PAD128300] <|endoftext|>",
            "emoji 🚀🦙😶‍🌫️ and 中文字符 and кириллица and ελληνικά",
            "   leading and trailing   ",
            "tabs\tand\r\nnewlines\n\n\n",
            "3.14159 1,000,000 'quoted' \"double\" it's we'll I'VE",
            "");

    private TokenizerEquivalence() {}

    /**
     * Asserts that {@code fromGguf} behaves as {@code original}. One difference is the converter's
     * on purpose: added tokens that look special ({@code <|...|>}) are control tokens in a GGUF,
     * so skip-special decoding drops them; those ids are returned (decoding is compared without them).
     */
    public static Set<Integer> assertSame(Tokenizer original, Tokenizer fromGguf, String what) {
        assertEquals(original.vocabSize(), fromGguf.vocabSize(), what + ": vocabulary size");
        Set<Integer> nowControl = new TreeSet<>();
        List<String> added = new ArrayList<>();
        for (int id = 0; id < original.vocabSize(); id++) {
            String text = original.tokenText(id);
            assertEquals(text, fromGguf.tokenText(id), what + ": token " + id);
            if (original.isSpecial(id) != fromGguf.isSpecial(id)) {
                assertTrue(!original.isSpecial(id) && text.startsWith("<|") && text.endsWith("|>"),
                        what + ": token " + id + " " + text + " changed its special flag");
                nowControl.add(id);
            }
            if (original.isSpecial(id) || fromGguf.isSpecial(id) || (text != null && text.startsWith("<"))) {
                added.add(text);
            }
        }
        List<String> texts = new ArrayList<>(TEXTS);
        texts.add(String.join(" x ", added));
        List<int[]> idLists = new ArrayList<>();
        for (String t : texts) {
            int[] ids = original.encode(t);
            assertArrayEquals(ids, fromGguf.encode(t), what + ": ids of " + t);
            idLists.add(ids);
        }
        Random r = new Random(7);
        for (int k = 0; k < 20; k++) {
            int[] ids = new int[40];
            for (int i = 0; i < ids.length; i++) {
                // a third of the ids lie past the tokenizer, where a padded GGUF has placeholders
                ids[i] = r.nextInt(3) == 0 ? original.vocabSize() + r.nextInt(400) : r.nextInt(original.vocabSize());
            }
            idLists.add(ids);
        }
        for (int[] ids : idLists) {
            assertEquals(original.decode(ids, false), fromGguf.decode(ids, false), what + ": text of ids");
            int[] kept = java.util.Arrays.stream(ids).filter(id -> !nowControl.contains(id)).toArray();
            assertEquals(original.decode(kept, true), fromGguf.decode(kept, true), what + ": text of ids, specials skipped");
        }
        return nowControl;
    }
}
