package qlab.engine.gguf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import qlab.engine.model.Model;
import qlab.engine.model.Transformer;
import qlab.engine.safetensors.Checkpoint;
import qlab.engine.testing.Fixtures;
import qlab.engine.testing.GgmlFixtures;
import qlab.engine.tokenizer.Tokenizer;
import qlab.engine.util.WorkerPool;

/** tiny-k as llama.cpp's F16 GGUF against the same model as safetensors (fixtures/ggml/models). */
class GgufModelTest {

    @Test
    void headerAndMetadataReadAsWritten() {
        GgufFile f = GgufFile.open(GgmlFixtures.model("tiny-k.f16.gguf"), GgufTensorType.FLOATS);
        assertEquals(3, f.version());
        assertEquals(32, f.alignment());
        assertEquals("qwen2", f.string("general.architecture"));
        assertEquals(4096, f.strings("tokenizer.ggml.tokens").size());
        assertEquals(3837, f.strings("tokenizer.ggml.merges").size());
        assertEquals(GgufValueType.INT32, f.metadata().get("tokenizer.ggml.token_type").elementType());
        assertEquals(4093, f.integer("tokenizer.ggml.bos_token_id"));
        assertFalse(f.bool("tokenizer.ggml.add_bos_token", true));
        assertEquals(1e6, f.number("qwen2.rope.freq_base"));
        // token_embd, 2 layers x 12 tensors, output_norm; no output.weight (tied)
        assertEquals(26, f.tensors().size());
        GgufTensor embed = f.tensor("token_embd.weight");
        assertArrayEquals(new long[] {384, 4096}, embed.ne());
        assertEquals(GgufTensorType.F16, embed.type());
    }

    @Test
    void tensorBytesEqualTheSafetensors() {
        GgufModel g = GgufModel.open(GgmlFixtures.model("tiny-k.f16.gguf"), GgufTensorType.FLOATS);
        Checkpoint ckpt = Checkpoint.open(GgmlFixtures.model("tiny-k"));
        assertEquals(ckpt.tensors().keySet(), new java.util.TreeSet<>(ckpt.tensors().keySet()));
        for (String name : ckpt.tensors().keySet()) {
            GgufTensor t = g.tensor(name);
            assertArrayEquals(ckpt.info(name).shape(), t.shape(), name);
            assertArrayEquals(ckpt.floats(name), g.file().floats(t.name()), name);
        }
    }

    @Test
    void configEqualsConfigJson() {
        GgufModel g = GgufModel.open(GgmlFixtures.model("tiny-k.f16.gguf"), GgufTensorType.FLOATS);
        Model hf = Model.load(GgmlFixtures.model("tiny-k"));
        assertEquals(hf.config(), g.config());
    }

    @Test
    void logitsAreBitwiseEqualToTheSafetensorsModel() {
        Model gguf = GgufModel.load(GgmlFixtures.model("tiny-k.f16.gguf"));
        Model hf = Model.load(GgmlFixtures.model("tiny-k"));
        int[] tokens = Arrays.copyOf(Fixtures.ints(Fixtures.json(GgmlFixtures.dir().resolve("llamacpp-eval-tokens.json"))
                .get("ids")), 48);
        try (WorkerPool pool = new WorkerPool(2)) {
            Transformer a = new Transformer(gguf, pool);
            Transformer b = new Transformer(hf, pool);
            float[] la = a.forward(tokens, a.newCache(64), true);
            float[] lb = b.forward(tokens, b.newCache(64), true);
            assertEquals(48 * 4096, la.length);
            for (int i = 0; i < la.length; i++) {
                if (Float.floatToRawIntBits(la[i]) != Float.floatToRawIntBits(lb[i])) {
                    throw new AssertionError("logit " + i + ": " + la[i] + " vs " + lb[i]);
                }
            }
        }
    }

    @Test
    void tokenizerFromMetadataGivesLlamaCppsIdsOnTheEvaluationText() throws IOException {
        JsonNode golden = Fixtures.json(GgmlFixtures.dir().resolve("llamacpp-eval-tokens.json"));
        String text = Files.readString(GgmlFixtures.home().resolve(golden.get("eval_text").get("path").asText()));
        text = text.endsWith("\n") ? text.substring(0, text.length() - 1) : text;
        Tokenizer fromGguf = GgufTokenizer.read(GgufFile.open(GgmlFixtures.model("tiny-k.f16.gguf"), GgufTensorType.FLOATS));
        int[] ids = fromGguf.encode(text);
        assertArrayEquals(Fixtures.ints(golden.get("ids")), ids);
        Tokenizer fromJson = Tokenizer.load(GgmlFixtures.model("tiny-k"));
        assertArrayEquals(fromJson.encode(text), ids);
        assertEquals(text, fromGguf.decode(ids, false));
        String chat = "<|im_start|>user\nhi<|im_end|>";
        assertArrayEquals(fromJson.encode(chat), fromGguf.encode(chat));
        assertEquals(fromJson.decode(fromJson.encode(chat), true), fromGguf.decode(fromGguf.encode(chat), true));
        assertEquals(4095, fromGguf.tokenId("<|im_end|>").getAsInt());
    }
}
