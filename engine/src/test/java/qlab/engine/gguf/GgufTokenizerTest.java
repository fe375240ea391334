package qlab.engine.gguf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import qlab.engine.testing.Fixtures;

/** The tokenizer metadata an export writes for Llama 3 and Qwen3 tokenizers, as llama.cpp's converter writes it. */
class GgufTokenizerTest {

    @TempDir
    Path tmp;

    @Test
    void llama3AndQwen3TokenizersGetTheirPreTokenizerNames() {
        assertEquals("llama-bpe", GgufTokenizer.metadataOf(Fixtures.oracle("tiny-llama3-realvocab")).get(GgufTokenizer.PRE).value());
        assertEquals("qwen2", GgufTokenizer.metadataOf(Fixtures.oracle("tiny-qwen3-realvocab")).get(GgufTokenizer.PRE).value());
    }

    /**
     * Llama 3.x's tokenizer.json puts {@code <|begin_of_text|>} first in a TemplateProcessing
     * post-processor and its tokenizer_config.json has no add_bos_token: the converter then writes
     * add_bos_token = true. Without such a template it writes nothing.
     */
    @Test
    void aTemplateThatStartsWithTheBosTokenMeansAddBos() throws IOException {
        Path src = Fixtures.oracle("tiny-llama3-realvocab");
        assertFalse(GgufTokenizer.metadataOf(src).containsKey("tokenizer.ggml.add_bos_token"));
        Path dir = Files.createDirectories(tmp.resolve("llama3-template"));
        ObjectMapper mapper = new ObjectMapper();
        ObjectNode tokenizer = (ObjectNode) mapper.readTree(src.resolve("tokenizer.json").toFile());
        ObjectNode template = mapper.createObjectNode().put("type", "TemplateProcessing");
        template.putArray("single").add(mapper.createObjectNode().set("SpecialToken",
                mapper.createObjectNode().put("id", "<|begin_of_text|>").put("type_id", 0)))
                .add(mapper.createObjectNode().set("Sequence", mapper.createObjectNode().put("id", "A").put("type_id", 0)));
        ObjectNode sequence = mapper.createObjectNode().put("type", "Sequence");
        sequence.putArray("processors").add(tokenizer.get("post_processor")).add(template);
        tokenizer.set("post_processor", sequence);
        mapper.writeValue(dir.resolve("tokenizer.json").toFile(), tokenizer);
        Files.copy(src.resolve("tokenizer_config.json"), dir.resolve("tokenizer_config.json"));
        Map<String, GgufValue> m = GgufTokenizer.metadataOf(dir);
        assertEquals(true, m.get("tokenizer.ggml.add_bos_token").value());
        assertEquals(128000L, ((Number) m.get("tokenizer.ggml.bos_token_id").value()).longValue());
    }
}
