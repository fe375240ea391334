package qlab.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import qlab.engine.chat.ChatMessage;
import qlab.engine.chat.ChatTemplate;
import qlab.engine.testing.Fixtures;

/** Text in, text out, on the fixture model with the real Qwen vocabulary. */
class TextGenerationTest {

    private static Path model() {
        return Fixtures.oracle().resolve("tiny-qwen2-realvocab");
    }

    @Test
    void generateFromTextReproducesTheGoldenGreedyIds() throws Exception {
        JsonNode manifest = Fixtures.json(model().resolve("golden/manifest.json"));
        for (JsonNode p : manifest.get("prompts")) {
            CliRun r = CliRun.of("generate", "--model", model().toString(), "--prompt", p.get("text").textValue(),
                    "--max-tokens", "20", "--ignore-eos", "--json", "--threads", "1");
            assertEquals(0, r.exit(), r.err());
            JsonNode j = new ObjectMapper().readTree(r.out());
            assertEquals(p.get("input_ids"), j.get("prompt_ids"), p.get("name").textValue());
            assertEquals(p.get("greedy_continuation"), j.get("ids"), p.get("name").textValue());
            assertEquals(p.get("greedy_continuation_decoded").textValue(), j.get("text").textValue());
        }
    }

    @Test
    void aSeedReproducesASampledTextAndAnotherSeedDoesNot() throws Exception {
        String[] args = {"generate", "--model", model().toString(), "--prompt", "The quick brown fox", "--max-tokens", "24",
            "--temperature", "0.9", "--top-k", "50", "--top-p", "0.95", "--json"};
        String a = new ObjectMapper().readTree(CliRun.of(concat(args, "--seed", "11")).out()).get("ids").toString();
        String b = new ObjectMapper().readTree(CliRun.of(concat(args, "--seed", "11")).out()).get("ids").toString();
        String c = new ObjectMapper().readTree(CliRun.of(concat(args, "--seed", "12")).out()).get("ids").toString();
        assertEquals(a, b);
        assertNotEquals(a, c);
    }

    private static String[] concat(String[] a, String... b) {
        String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    @Test
    void chatKeepsTheCacheAndRepliesAsAFreshRenderWould() throws Exception {
        String input = "What is the capital of France?\nAnd of Italy?\n/exit\n";
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = new CommandLine(new ChatCommand(new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8))));
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        // The model's tokenizer_config.json carries the Qwen3 template; this conversation uses Qwen2.5's.
        assertEquals(0, cl.execute("--model", model().toString(), "--template", "qwen2.5", "--max-tokens", "10",
                "--threads", "1"), err.toString());
        String[] replies = out.toString().split("\n");
        assertEquals(2, replies.length, out.toString());
        assertTrue(err.toString().contains("36 prompt tokens"), err.toString()); // default system prompt + first question
        ChatTemplate template = ChatTemplate.qwen25();

        // The second reply must equal what a fresh, uncached run of the whole rendered conversation gives.
        String first = replies[0];
        String rendered = template.render(java.util.List.of(
                ChatMessage.user("What is the capital of France?"), ChatMessage.assistant(first),
                ChatMessage.user("And of Italy?")), null, true);
        CliRun fresh = CliRun.of("generate", "--model", model().toString(), "--prompt", rendered, "--max-tokens", "10",
                "--json", "--threads", "1");
        assertEquals(replies[1], new ObjectMapper().readTree(fresh.out()).get("text").textValue());
    }

    @Test
    void generateWithChatRendersThePromptAsAUserTurn() throws Exception {
        String question = "What is the capital of France?";
        CliRun chat = CliRun.of("generate", "--model", model().toString(), "--prompt", question, "--chat",
                "--max-tokens", "8", "--json", "--threads", "1");
        assertEquals(0, chat.exit(), chat.err());
        String rendered = ChatTemplate.forModel(model()).render(java.util.List.of(ChatMessage.user(question)), null, true);
        CliRun plain = CliRun.of("generate", "--model", model().toString(), "--prompt", rendered,
                "--max-tokens", "8", "--json", "--threads", "1");
        JsonNode a = new ObjectMapper().readTree(chat.out());
        JsonNode b = new ObjectMapper().readTree(plain.out());
        assertEquals(b.get("prompt_ids"), a.get("prompt_ids"));
        assertEquals(b.get("ids"), a.get("ids"));
        CliRun noPrompt = CliRun.of("generate", "--model", model().toString(), "--ids", "1,2", "--chat");
        assertNotEquals(0, noPrompt.exit());
        assertTrue(noPrompt.err().contains("--chat and --system need --prompt"), noPrompt.err());
    }
}
