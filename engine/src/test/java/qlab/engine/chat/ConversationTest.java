package qlab.engine.chat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import qlab.engine.testing.Fixtures;

class ConversationTest {

    @Test
    void piecesConcatenateToTheFullRenderWhenRepliesEndWithImEnd() {
        Conversation chat = new Conversation(ChatTemplate.qwen25(), null);
        StringBuilder fed = new StringBuilder();
        String[][] turns = {
                {"Where is the treasure?", "Arr, under the old oak."},
                {"Which oak?\nBe specific.", "The one by the 🌊 shore."},
                {"Thanks", "Yo ho!"},
        };
        for (int t = 0; t < turns.length; t++) {
            chat.add(ChatMessage.user(turns[t][0]));
            Conversation.PromptPiece piece = chat.nextPrompt();
            assertFalse(piece.restart());
            if (t > 0) {
                // The previous reply ended at <|im_end|>; its newline opens this piece.
                assertTrue(piece.text().startsWith("\n<|im_start|>user\n"), piece.text());
            }
            fed.append(piece.text());
            assertEquals(chat.render(true), fed.toString(), "after prompt " + t);
            String generated = turns[t][1] + "<|im_end|>";
            chat.addAssistantReply(generated);
            fed.append(generated);
            assertEquals(fed.toString(), chat.cachedText());
        }
        assertEquals(ChatMessage.assistant("Yo ho!"), chat.messages().get(chat.messages().size() - 1));
        // With the last reply closed, the whole conversation is the fed text plus the template's final newline.
        assertEquals(chat.render(false), fed + "\n");
    }

    @Test
    void whenTheStopTokenWasNotFedThePieceStartsWithIt() {
        Conversation chat = new Conversation(ChatTemplate.qwen25(), null);
        chat.add(ChatMessage.system("Be brief."));
        chat.add(ChatMessage.user("Hi"));
        String first = chat.nextPrompt().text();
        chat.addAssistantReply("Hello.");
        chat.add(ChatMessage.user("Bye"));
        Conversation.PromptPiece second = chat.nextPrompt();
        assertFalse(second.restart());
        assertEquals("<|im_end|>\n<|im_start|>user\nBye<|im_end|>\n<|im_start|>assistant\n", second.text());
        assertEquals(chat.render(true), first + "Hello." + second.text());
    }

    @Test
    void reproducesTheMultiTurnOracleCaseIncrementally() throws IOException {
        Path cases = Fixtures.oracle("chat", "cases.jsonl");
        ObjectMapper json = new ObjectMapper();
        JsonNode multiTurn = null;
        for (String line : Files.readAllLines(cases, StandardCharsets.UTF_8)) {
            JsonNode c = json.readTree(line);
            if (c.get("name").asText().equals("v3_multi_turn")) {
                multiTurn = c;
            }
        }
        assertNotNull(multiTurn, "case v3_multi_turn not in " + cases);
        List<ChatMessage> messages = ChatMessage.listFromJson(multiTurn.get("messages"), "v3_multi_turn");
        Conversation chat = new Conversation(ChatTemplate.qwen25(), null);
        StringBuilder fed = new StringBuilder();
        for (ChatMessage message : messages) {
            if (message.role().equals("assistant")) {
                fed.append(chat.nextPrompt().text());
                String generated = message.content() + "<|im_end|>";
                chat.addAssistantReply(generated);
                fed.append(generated);
            } else {
                chat.add(message);
            }
        }
        fed.append(chat.nextPrompt().text());
        assertEquals(multiTurn.get("expected_text").asText(), fed.toString());
    }

    @Test
    void cacheThatNoLongerMatchesTheConversationRestarts() {
        Conversation chat = new Conversation(ChatTemplate.qwen25(), null);
        chat.add(ChatMessage.user("Hi"));
        chat.nextPrompt();
        // The model stopped with <|endoftext|>, which went into the cache but is not what the template renders.
        chat.addAssistantReply("Hello.", "Hello.<|endoftext|>");
        chat.add(ChatMessage.user("Again"));
        Conversation.PromptPiece piece = chat.nextPrompt();
        assertTrue(piece.restart());
        assertEquals(chat.render(true), piece.text());
        assertEquals(chat.render(true), chat.cachedText());
    }

    @Test
    void clearingTheCacheGivesTheWholeConversationNext() {
        Conversation chat = new Conversation(ChatTemplate.qwen25(), null);
        chat.add(ChatMessage.user("Hi"));
        chat.nextPrompt();
        chat.addAssistantReply("Hello.<|im_end|>");
        chat.add(ChatMessage.user("Again"));
        chat.clearCache();
        Conversation.PromptPiece piece = chat.nextPrompt();
        assertFalse(piece.restart());
        assertEquals(chat.render(true), piece.text());
    }
}
