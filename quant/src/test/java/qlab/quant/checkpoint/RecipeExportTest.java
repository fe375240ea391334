package qlab.quant.checkpoint;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import qlab.engine.gguf.GgufFile;
import qlab.engine.gguf.GgufTensor;
import qlab.engine.gguf.GgufTokenizer;
import qlab.engine.model.Model;
import qlab.engine.testing.Fixtures;
import qlab.engine.testing.GgmlFixtures;
import qlab.engine.util.WorkerPool;
import qlab.quant.imatrix.LlamaImatrix;

/**
 * {@code qlab export --format Q4_K_M} and every other llama.cpp named type, with and without the
 * fixture's importance matrix: the GGUF written from tiny-k's F16 weights holds llama-quantize's
 * tensors (type, shape and sha256 of every tensor) and its file type.
 */
class RecipeExportTest {

    @TempDir
    static Path tmp;
    static Model tinyK;

    @BeforeAll
    static void load() {
        tinyK = Model.load(GgmlFixtures.model("tiny-k"));
    }

    static Stream<Path> recipeFiles() throws IOException {
        try (Stream<Path> files = Files.list(GgmlFixtures.dir().resolve("recipes"))) {
            return files.filter(p -> p.toString().endsWith(".json")).sorted().toList().stream();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("recipeFiles")
    void exportEqualsLlamaQuantize(Path file) {
        JsonNode recipe = Fixtures.json(file);
        String name = recipe.get("named_type").asText();
        boolean importance = !recipe.get("imatrix").isNull();
        Path out = tmp.resolve(file.getFileName() + ".gguf");
        try (WorkerPool pool = new WorkerPool(2)) {
            GgufExport.write(tinyK, "tiny-k", QuantPlan.parse(name),
                    importance ? LlamaImatrix.load(GgmlFixtures.dir().resolve("imatrix/tiny-k.imatrix.gguf")) : null,
                    GgufTokenizer.metadataOf(GgmlFixtures.model("tiny-k")), pool, out);
        }
        GgufFile f = GgufCheckpoint.open(out);
        assertEquals(recipe.get("tensors").size(), f.tensors().size());
        for (JsonNode t : recipe.get("tensors")) {
            GgufTensor g = f.tensor(t.get("name").asText());
            String where = file.getFileName() + " " + g.name();
            assertEquals(t.get("type").asText(), g.type().name(), where);
            assertEquals(t.get("sha256").asText(), GgufCheckpointTest.sha256(f.bytes(g.name())), where);
        }
        assertEquals(recipe.get("metadata").get("general.file_type").asText(),
                String.valueOf(f.metadata().get("general.file_type").value()), "general.file_type");
    }
}
