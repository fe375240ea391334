package qlab.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * OpenAI's own client library (npm's {@code openai}, run by node) completes a streamed chat and an
 * echo + logprobs completion against the server, with the same results as the JDK's HttpClient.
 * The package is installed into target/openai-client on first run; the test is skipped only where
 * node is not installed.
 */
@Timeout(300)
class OpenAiClientTest {

    @Test
    void theOpenAiPackageTalksToTheServer() throws Exception {
        assumeTrue(onPath("node") && onPath("npm"), "node and npm are not installed");
        Path dir = Path.of("target", "openai-client").toAbsolutePath();
        Files.createDirectories(dir);
        for (String f : List.of("package.json", "client.mjs")) {
            Path source = Path.of(OpenAiClientTest.class.getResource("/openai-client/" + f).toURI());
            Files.copy(source, dir.resolve(f), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
        if (!Files.isDirectory(dir.resolve("node_modules/openai"))) {
            run(dir, "npm", "install", "--no-audit", "--no-fund", "--loglevel=error");
        }
        try (DemoServer s = new DemoServer()) {
            String out = run(dir, "node", "client.mjs", "http://127.0.0.1:" + s.server.port() + "/v1", "demo");
            JsonNode r = DemoServer.JSON.readTree(out);

            JsonNode chat = s.ok("/v1/chat/completions", ServeEndpointsTest.body("messages",
                    List.of(ServeEndpointsTest.body("role", "user", "content", "Tell me about the sea.")),
                    "max_tokens", 16, "temperature", 0));
            assertEquals(chat.get("choices").get(0).get("message").get("content").asText(), r.get("chat").asText());
            assertEquals(chat.get("choices").get(0).get("finish_reason").asText(), r.get("finish").asText());
            assertEquals(chat.get("usage").get("completion_tokens"), r.get("usage").get("completion_tokens"));

            JsonNode echo = s.ok("/v1/completions", ServeEndpointsTest.body("prompt", "Every morning, the old woman",
                    "max_tokens", 1, "temperature", 0, "logprobs", 1, "echo", true));
            JsonNode theirs = r.get("echo").get("choices").get(0);
            JsonNode ours = echo.get("choices").get(0);
            assertEquals(ours.get("text"), theirs.get("text"));
            assertTrue(theirs.get("logprobs").get("token_logprobs").get(0).isNull());
            assertEquals(ours.get("logprobs"), theirs.get("logprobs"));
        }
    }

    private static boolean onPath(String command) {
        String path = System.getenv("PATH");
        if (path == null) {
            return false;
        }
        for (String d : path.split(File.pathSeparator)) {
            if (Files.isExecutable(Path.of(d, command))) {
                return true;
            }
        }
        return false;
    }

    private static String run(Path dir, String... command) throws IOException, InterruptedException {
        // stderr to a file, so a chatty npm cannot block the process while stdout is read
        Path errFile = dir.resolve(command[0] + ".stderr");
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectError(errFile.toFile()).start();
        byte[] out = p.getInputStream().readAllBytes();
        boolean ended = p.waitFor(240, TimeUnit.SECONDS);
        String err = Files.readString(errFile, StandardCharsets.UTF_8);
        if (!ended || p.exitValue() != 0) {
            throw new AssertionError(String.join(" ", command) + " failed: " + err);
        }
        return new String(out, StandardCharsets.UTF_8);
    }
}
