package qlab.serve;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import qlab.engine.QlabException;
import qlab.engine.chat.ChatMessage;
import qlab.engine.sampling.SamplingConfig;
import qlab.engine.tokenizer.StreamingDecoder;

/**
 * POST /v1/chat/completions and /v1/completions: validates the request, submits one sequence per
 * prompt to the scheduler, and answers in OpenAI's shapes, as one JSON object or as server-sent
 * events.
 */
final class Completions {

    /** top_logprobs / logprobs at most, as OpenAI's API. */
    static final int MAX_TOP_LOGPROBS = 20;

    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final AtomicLong IDS = new AtomicLong();

    private final ServedModel served;
    private final Scheduler scheduler;

    Completions(ServedModel served, Scheduler scheduler) {
        this.served = served;
        this.scheduler = scheduler;
    }

    /** A validated request: its prompts (token ids and text), sampling, and what to report. */
    private record Plan(boolean chat, List<int[]> prompts, List<String> promptTexts, SamplingConfig sampling,
                        int maxTokens, int topLogprobs, boolean echo, List<String> stops, boolean stream,
                        boolean includeUsage, boolean ignoreEos) {}

    // ----------------------------------------------------------------------------------------
    // Parsing

    void chat(JsonNode body, Exchange out) throws IOException {
        Fields f = new Fields(body);
        if (served.template() == null) {
            throw new ApiError(400, "invalid_request_error", "no_chat_template", "messages",
                    "model " + served.id() + " has no chat template: use /v1/completions, or start the server with --template");
        }
        JsonNode messages = f.raw("messages");
        if (messages == null) {
            throw ApiError.invalid("messages", "\"messages\" is required");
        }
        if (!messages.isArray() || messages.isEmpty()) {
            throw ApiError.invalid("messages", "\"messages\" must be a non-empty array of messages");
        }
        List<ChatMessage> list;
        try {
            list = ChatMessage.listFromJson(messages, "messages");
        } catch (QlabException e) {
            throw ApiError.invalid("messages", e.getMessage());
        }
        String text;
        try {
            text = served.template().render(list, null, true);
        } catch (QlabException e) {
            throw ApiError.invalid("messages", e.getMessage());
        }
        int[] ids = served.tokenizer().encode(text);
        checkPrompt(ids, "messages");
        int ctx = scheduler.settings().ctx();
        String maxName = f.has("max_completion_tokens") ? "max_completion_tokens" : "max_tokens";
        int maxTokens = (int) f.integer(maxName, ctx - ids.length, 1, ctx);
        checkFits(ids, maxTokens, maxName);
        boolean logprobs = f.bool("logprobs", false);
        int top = (int) f.integer("top_logprobs", 0, 0, MAX_TOP_LOGPROBS);
        single(f);
        boolean stream = f.bool("stream", false);
        Plan plan = new Plan(true, List.of(ids), List.of(text), sampling(f), maxTokens, logprobs ? top : -1, false,
                f.stopStrings(), stream, includeUsage(f, stream), f.bool("ignore_eos", false));
        run(plan, out);
    }

    void completion(JsonNode body, Exchange out) throws IOException {
        Fields f = new Fields(body);
        JsonNode prompt = f.raw("prompt");
        if (prompt == null) {
            throw ApiError.invalid("prompt", "\"prompt\" is required");
        }
        List<int[]> prompts = new ArrayList<>();
        List<String> texts = new ArrayList<>();
        if (prompt.isTextual()) {
            prompts.add(served.tokenizer().encode(prompt.textValue()));
        } else if (prompt.isArray() && !prompt.isEmpty() && prompt.get(0).isTextual()) {
            for (JsonNode p : prompt) {
                if (!p.isTextual()) {
                    throw ApiError.invalid("prompt", "\"prompt\" mixes strings and other values");
                }
                prompts.add(served.tokenizer().encode(p.textValue()));
            }
        } else if (prompt.isArray() && !prompt.isEmpty() && prompt.get(0).isArray()) {
            for (JsonNode p : prompt) {
                prompts.add(tokenIds(p, "prompt"));
            }
        } else if (prompt.isArray() && !prompt.isEmpty()) {
            prompts.add(tokenIds(prompt, "prompt"));
        } else {
            throw ApiError.invalid("prompt", "\"prompt\" must be a string, an array of strings, an array of token ids"
                    + " or an array of such arrays, non-empty; got " + Fields.describe(prompt)
                    + (prompt.isArray() ? " with no elements" : ""));
        }
        for (int[] ids : prompts) {
            checkPrompt(ids, "prompt");
            texts.add(served.tokenizer().decode(ids));
        }
        int ctx = scheduler.settings().ctx();
        int maxTokens = (int) f.integer("max_tokens", Math.min(16, ctx), 0, ctx);
        for (int[] ids : prompts) {
            checkFits(ids, maxTokens, "max_tokens");
        }
        boolean echo = f.bool("echo", false);
        int logprobs = (int) f.integer("logprobs", -1, 0, MAX_TOP_LOGPROBS);
        single(f);
        boolean stream = f.bool("stream", false);
        if (stream && echo) {
            throw ApiError.invalid("echo", "\"echo\" is supported without \"stream\" only");
        }
        if (stream && prompts.size() > 1) {
            throw ApiError.invalid("prompt", "with \"stream\", \"prompt\" must be a single prompt");
        }
        Plan plan = new Plan(false, prompts, texts, sampling(f), maxTokens, logprobs, echo, f.stopStrings(), stream,
                includeUsage(f, stream), f.bool("ignore_eos", false));
        run(plan, out);
    }

    private int[] tokenIds(JsonNode array, String name) {
        if (array.isArray() && array.isEmpty()) {
            throw ApiError.invalid(name, "\"" + name + "\" holds an empty list of token ids");
        }
        return Fields.tokenIds(array, name, served.model().config().vocabSize());
    }

    private void checkPrompt(int[] ids, String name) {
        int ctx = scheduler.settings().ctx();
        if (ids.length == 0) {
            throw ApiError.invalid(name, "\"" + name + "\" encodes to no tokens");
        }
        if (ids.length >= ctx) {
            throw new ApiError(400, "invalid_request_error", "context_length_exceeded", name,
                    "\"" + name + "\" is " + ids.length + " tokens; the context holds " + ctx + " (--ctx), prompt and"
                            + " at least one new token");
        }
    }

    private void checkFits(int[] ids, int maxTokens, String name) {
        int ctx = scheduler.settings().ctx();
        if (ids.length + maxTokens > ctx) {
            throw new ApiError(400, "invalid_request_error", "context_length_exceeded", name,
                    "the prompt's " + ids.length + " tokens and \"" + name + "\" " + maxTokens + " exceed the context of "
                            + ctx + " tokens (--ctx)");
        }
    }

    private static void single(Fields f) {
        if (f.integer("n", 1, 1, Integer.MAX_VALUE) != 1) {
            throw ApiError.invalid("n", "\"n\" must be 1: one choice per prompt");
        }
    }

    private static boolean includeUsage(Fields f, boolean stream) {
        JsonNode o = f.raw("stream_options");
        if (o == null) {
            return false;
        }
        if (!o.isObject()) {
            throw ApiError.invalid("stream_options", "\"stream_options\" must be an object, got " + Fields.describe(o));
        }
        JsonNode u = o.get("include_usage");
        if (u != null && !u.isNull() && !u.isBoolean()) {
            throw ApiError.invalid("stream_options", "\"stream_options.include_usage\" must be a boolean, got "
                    + Fields.describe(u));
        }
        return stream && u != null && u.asBoolean();
    }

    private SamplingConfig sampling(Fields f) {
        double temperature = f.number("temperature", 1.0, 0.0, 2.0);
        double topP = f.number("top_p", 1.0, 0.0, 1.0);
        int topK = (int) f.integer("top_k", 0, 0, Integer.MAX_VALUE);
        double minP = f.number("min_p", 0.0, 0.0, 1.0);
        double penalty = f.number("repetition_penalty", 1.0, 0.0, 10.0);
        if (penalty == 0.0) {
            throw ApiError.invalid("repetition_penalty", "\"repetition_penalty\" must be above 0 (1 = off), got 0");
        }
        long seed = f.has("seed") ? f.integer("seed", 0, Long.MIN_VALUE, Long.MAX_VALUE)
                : ThreadLocalRandom.current().nextLong();
        if (temperature > 0 && (float) temperature == 0f) {
            throw ApiError.invalid("temperature", "\"temperature\" must be 0 or at least 1e-30, got " + temperature);
        }
        return new SamplingConfig(temperature, topK, topP, minP, penalty, seed);
    }

    // ----------------------------------------------------------------------------------------
    // Running

    private void run(Plan plan, Exchange out) throws IOException {
        List<RequestStream> streams = new ArrayList<>();
        List<Scheduler.Ticket> tickets = new ArrayList<>();
        try {
            for (int i = 0; i < plan.prompts().size(); i++) {
                int offset = plan.echo() ? plan.promptTexts().get(i).length() : 0;
                RequestStream s = new RequestStream(served.tokenizer(), plan.stops(), offset);
                tickets.add(scheduler.submit(new SequenceRequest(plan.prompts().get(i), plan.sampling(), plan.maxTokens(),
                        plan.topLogprobs(), plan.echo(), plan.ignoreEos(), s)));
                streams.add(s);
            }
        } catch (Scheduler.QueueFull e) {
            tickets.forEach(Scheduler.Ticket::cancel);
            throw new ApiError(429, "rate_limit_exceeded", "rate_limit_exceeded", null, e.getMessage());
        }
        out.onDisconnect(() -> tickets.forEach(Scheduler.Ticket::cancel));
        String id = (plan.chat() ? "chatcmpl-" : "cmpl-") + IDS.incrementAndGet();
        long created = System.currentTimeMillis() / 1000;
        try {
            if (plan.stream()) {
                stream(plan, id, created, streams.get(0), out);
            } else {
                whole(plan, id, created, streams, out);
            }
        } catch (IOException | RuntimeException e) {
            tickets.forEach(Scheduler.Ticket::cancel);
            throw e;
        }
    }

    private static RequestStream.Event next(RequestStream s) {
        try {
            return s.events.take();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ApiError(503, "server_error", null, null, "interrupted");
        }
    }

    private void whole(Plan plan, String id, long created, List<RequestStream> streams, Exchange out) throws IOException {
        ObjectNode root = header(plan, id, created);
        ArrayNode choices = root.putArray("choices");
        int promptTokens = 0;
        int completionTokens = 0;
        int cachedTokens = 0;
        for (int i = 0; i < streams.size(); i++) {
            StringBuilder text = new StringBuilder(plan.echo() ? plan.promptTexts().get(i) : "");
            List<RequestStream.Piece> pieces = new ArrayList<>();
            TokenLogprob[] promptScores = null;
            RequestStream.Done done = null;
            while (done == null) {
                RequestStream.Event e = next(streams.get(i));
                switch (e) {
                    case RequestStream.Piece p -> {
                        text.append(p.text());
                        pieces.add(p);
                    }
                    case RequestStream.PromptScores p -> promptScores = p.scores();
                    case RequestStream.Done d -> done = d;
                    case RequestStream.Failed failed -> throw new ApiError(500, "server_error", null, null, failed.message());
                }
            }
            promptTokens += done.promptTokens();
            completionTokens += done.completionTokens();
            cachedTokens += done.cachedTokens();
            ObjectNode choice = choices.addObject();
            choice.put("index", i);
            if (plan.chat()) {
                ObjectNode message = choice.putObject("message");
                message.put("role", "assistant");
                message.put("content", text.toString());
                if (plan.topLogprobs() >= 0) {
                    ArrayNode content = choice.putObject("logprobs").putArray("content");
                    for (RequestStream.Piece p : pieces) {
                        if (p.token() != null) {
                            content.add(chatLogprob(p.token()));
                        }
                    }
                } else {
                    choice.putNull("logprobs");
                }
            } else {
                choice.put("text", text.toString());
                if (plan.topLogprobs() >= 0) {
                    choice.set("logprobs", completionLogprobs(plan, i, promptScores, pieces));
                } else {
                    choice.putNull("logprobs");
                }
            }
            choice.put("finish_reason", done.reason().openAiName);
        }
        root.set("usage", usage(promptTokens, completionTokens, cachedTokens));
        out.json(200, root);
    }

    private void stream(Plan plan, String id, long created, RequestStream s, Exchange out) throws IOException {
        out.startEvents();
        if (plan.chat()) {
            ObjectNode first = chunk(plan, id, created);
            ObjectNode delta = ((ObjectNode) first.get("choices").get(0)).putObject("delta");
            delta.put("role", "assistant");
            delta.put("content", "");
            out.event(first.toString());
        }
        while (true) {
            RequestStream.Event e = next(s);
            switch (e) {
                case RequestStream.Piece p -> {
                    if (p.text().isEmpty() && (p.token() == null || plan.topLogprobs() < 0)) {
                        continue;
                    }
                    ObjectNode c = chunk(plan, id, created);
                    ObjectNode choice = (ObjectNode) c.get("choices").get(0);
                    if (plan.chat()) {
                        choice.putObject("delta").put("content", p.text());
                        if (plan.topLogprobs() >= 0 && p.token() != null) {
                            choice.putObject("logprobs").putArray("content").add(chatLogprob(p.token()));
                        }
                    } else {
                        choice.put("text", p.text());
                        if (plan.topLogprobs() >= 0 && p.token() != null) {
                            choice.set("logprobs", completionLogprobs(plan, 0, null, List.of(p)));
                        }
                    }
                    out.event(c.toString());
                }
                case RequestStream.PromptScores ignored -> {
                    // echo is refused with stream
                }
                case RequestStream.Done d -> {
                    ObjectNode c = chunk(plan, id, created);
                    ObjectNode choice = (ObjectNode) c.get("choices").get(0);
                    if (plan.chat()) {
                        choice.putObject("delta");
                    } else {
                        choice.put("text", "");
                    }
                    choice.put("finish_reason", d.reason().openAiName);
                    out.event(c.toString());
                    if (plan.includeUsage()) {
                        ObjectNode u = header(plan, id, created);
                        u.put("object", plan.chat() ? "chat.completion.chunk" : "text_completion");
                        u.putArray("choices");
                        u.set("usage", usage(d.promptTokens(), d.completionTokens(), d.cachedTokens()));
                        out.event(u.toString());
                    }
                    out.event("[DONE]");
                    out.endEvents();
                    return;
                }
                case RequestStream.Failed failed -> {
                    ObjectNode err = new ApiError(500, "server_error", null, null, failed.message()).toJson();
                    out.event(err.toString());
                    out.endEvents();
                    return;
                }
            }
        }
    }

    // ----------------------------------------------------------------------------------------
    // Shapes

    private ObjectNode header(Plan plan, String id, long created) {
        ObjectNode root = JSON.objectNode();
        root.put("id", id);
        root.put("object", plan.chat() ? "chat.completion" : "text_completion");
        root.put("created", created);
        root.put("model", served.id());
        return root;
    }

    private ObjectNode chunk(Plan plan, String id, long created) {
        ObjectNode c = header(plan, id, created);
        c.put("object", plan.chat() ? "chat.completion.chunk" : "text_completion");
        ObjectNode choice = c.putArray("choices").addObject();
        choice.put("index", 0);
        choice.putNull("logprobs");
        choice.putNull("finish_reason");
        return c;
    }

    private static ObjectNode usage(int prompt, int completion, int cached) {
        ObjectNode u = JSON.objectNode();
        u.put("prompt_tokens", prompt);
        u.put("completion_tokens", completion);
        u.put("total_tokens", prompt + completion);
        u.putObject("prompt_tokens_details").put("cached_tokens", cached);
        return u;
    }

    private String tokenText(int id) {
        return served.tokenizer().decode(new int[] {id});
    }

    private ObjectNode chatLogprob(TokenLogprob t) {
        ObjectNode o = chatAlternative(t.id(), t.logprob());
        ArrayNode top = o.putArray("top_logprobs");
        for (int k = 0; k < t.topIds().length; k++) {
            top.add(chatAlternative(t.topIds()[k], t.topLogprobs()[k]));
        }
        return o;
    }

    private ObjectNode chatAlternative(int id, double logprob) {
        ObjectNode o = JSON.objectNode();
        String text = tokenText(id);
        o.put("token", text);
        o.put("logprob", logprob);
        ArrayNode bytes = o.putArray("bytes");
        for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
            bytes.add(b & 0xFF);
        }
        return o;
    }

    /**
     * {@code {tokens, token_logprobs, top_logprobs, text_offset}}: with echo the prompt's tokens
     * first (the first one's log-probability null: nothing predicts it), then the generated ones.
     */
    private ObjectNode completionLogprobs(Plan plan, int index, TokenLogprob[] promptScores, List<RequestStream.Piece> pieces) {
        ObjectNode o = JSON.objectNode();
        ArrayNode tokens = o.putArray("tokens");
        ArrayNode lps = o.putArray("token_logprobs");
        ArrayNode tops = o.putArray("top_logprobs");
        ArrayNode offsets = o.putArray("text_offset");
        if (plan.echo() && promptScores != null) {
            int[] ids = plan.prompts().get(index);
            StreamingDecoder d = served.tokenizer().streamingDecoder(false);
            int offset = 0;
            for (int p = 0; p < ids.length; p++) {
                tokens.add(tokenText(ids[p]));
                offsets.add(offset);
                offset += d.accept(ids[p]).length();
                TokenLogprob s = promptScores[p];
                if (s == null) {
                    lps.addNull();
                    tops.addNull();
                } else {
                    lps.add(s.logprob());
                    tops.add(topMap(s));
                }
            }
        }
        for (RequestStream.Piece p : pieces) {
            if (p.token() == null) {
                continue;
            }
            tokens.add(tokenText(p.token().id()));
            lps.add(p.token().logprob());
            tops.add(topMap(p.token()));
            offsets.add(p.textOffset());
        }
        return o;
    }

    private ObjectNode topMap(TokenLogprob t) {
        ObjectNode m = JSON.objectNode();
        for (int k = 0; k < t.topIds().length; k++) {
            String key = tokenText(t.topIds()[k]);
            if (!m.has(key)) {
                m.put(key, t.topLogprobs()[k]);
            }
        }
        return m;
    }

    static ObjectMapper mapper() {
        return MAPPER;
    }
}
