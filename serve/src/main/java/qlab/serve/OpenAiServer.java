package qlab.serve;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.Executors;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Blocker;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import qlab.engine.QlabException;

/**
 * The HTTP side: Jetty's server with one handler that routes by path. Handlers block (they wait
 * for the scheduler's tokens), so Jetty runs them on virtual threads; the model runs on the
 * scheduler's own thread and worker pool. The server listens before the model is loaded, and
 * answers /health with 503 until {@link #ready} is called.
 */
public final class OpenAiServer implements AutoCloseable {

    /**
     * @param maxBodyBytes request bodies larger than this are refused (413)
     * @param apiKey       when set, every route but /health needs {@code Authorization: Bearer <key>}
     */
    public record Options(String host, int port, Scheduler.Settings scheduling, long maxBodyBytes, String apiKey) {}

    private static final Set<String> ROUTES = Set.of("/health", "/metrics", "/v1/models", "/tokenize", "/detokenize",
            "/v1/chat/completions", "/v1/completions");
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
    private static final long IDLE_TIMEOUT_MS = 30 * 60 * 1000L;

    private final Options options;
    private final ServerMetrics metrics = new ServerMetrics();
    private final Server jetty;
    private final ServerConnector connector;
    private final long startedSeconds = System.currentTimeMillis() / 1000;
    private volatile ServedModel served;
    private volatile Scheduler scheduler;
    private volatile Completions completions;

    static {
        // Jetty logs through SLF4J; where the provider is slf4j-simple (the command line's), only its warnings.
        if (System.getProperty("org.slf4j.simpleLogger.log.org.eclipse.jetty") == null) {
            System.setProperty("org.slf4j.simpleLogger.log.org.eclipse.jetty", "warn");
        }
    }

    private OpenAiServer(Options options) {
        this.options = options;
        QueuedThreadPool threads = new QueuedThreadPool();
        threads.setName("qlab-http");
        threads.setVirtualThreadsExecutor(Executors.newVirtualThreadPerTaskExecutor());
        jetty = new Server(threads);
        connector = new ServerConnector(jetty);
        connector.setHost(options.host());
        connector.setPort(options.port());
        // A request waits silently while it is queued and its prompt is read (minutes under load);
        // Jetty's default of 30 s would close such connections.
        connector.setIdleTimeout(IDLE_TIMEOUT_MS);
        jetty.addConnector(connector);
        jetty.setHandler(new Router());
        jetty.setStopTimeout(2000);
    }

    /** Binds and starts answering (/health: 503 until {@link #ready}). */
    public static OpenAiServer start(Options options) {
        OpenAiServer s = new OpenAiServer(options);
        try {
            s.jetty.start();
        } catch (Exception e) {
            throw new QlabException("cannot listen on " + options.host() + ":" + options.port() + ": " + e.getMessage());
        }
        return s;
    }

    /** The model is loaded: start the scheduler and serve. */
    public void ready(ServedModel model) {
        Scheduler s = new Scheduler(model.model(), model.stopIds(), options.scheduling(), metrics);
        this.served = model;
        this.scheduler = s;
        this.completions = new Completions(model, s);
    }

    public int port() {
        return connector.getLocalPort();
    }

    public ServerMetrics metrics() {
        return metrics;
    }

    public void join() throws InterruptedException {
        jetty.join();
    }

    @Override
    public void close() {
        try {
            jetty.stop();
        } catch (Exception e) {
            // stopping is best effort: the process is ending or the test is done
        }
        if (scheduler != null) {
            scheduler.close();
        }
    }

    // ----------------------------------------------------------------------------------------
    // Routing

    private final class Router extends Handler.Abstract {

        Router() {
            super(InvocationType.BLOCKING);
        }

        @Override
        public boolean handle(Request request, Response response, Callback callback) {
            String path = Request.getPathInContext(request);
            JettyExchange ex = new JettyExchange(request, response);
            int status;
            try {
                route(path, request, ex);
                status = ex.status;
            } catch (ApiError e) {
                status = e.status;
                answerError(ex, e);
            } catch (RuntimeException e) {
                status = 500;
                answerError(ex, new ApiError(500, "server_error", null, null, String.valueOf(e.getMessage())));
            } catch (IOException e) {
                status = ex.status == 0 ? 499 : ex.status; // the client went away
            }
            metrics.request(ROUTES.contains(path) ? path : "other", status);
            if (ex.failed != null) {
                callback.failed(ex.failed);
            } else {
                callback.succeeded();
            }
            return true;
        }

        private void answerError(JettyExchange ex, ApiError e) {
            if (ex.committed) {
                return; // a stream already started: its status is sent
            }
            if (e.status == 429) {
                ex.response.getHeaders().put(HttpHeader.RETRY_AFTER, "1");
            }
            try {
                ex.json(e.status, e.toJson());
            } catch (IOException io) {
                // the client is gone
            }
        }

        private void route(String path, Request request, JettyExchange ex) throws IOException {
            String method = request.getMethod();
            if (!ROUTES.contains(path)) {
                throw new ApiError(404, "invalid_request_error", "not_found", null, "no route " + path);
            }
            if (path.equals("/health")) {
                requireMethod(method, "GET", path);
                ObjectNode o = JSON.objectNode();
                o.put("status", served == null ? "loading model" : "ok");
                ex.json(served == null ? 503 : 200, o);
                return;
            }
            if (options.apiKey() != null) {
                String auth = request.getHeaders().get(HttpHeader.AUTHORIZATION);
                if (auth == null || !auth.equals("Bearer " + options.apiKey())) {
                    throw new ApiError(401, "invalid_request_error", "invalid_api_key", null,
                            "missing or wrong API key: send \"Authorization: Bearer <key>\"");
                }
            }
            if (path.equals("/metrics")) {
                requireMethod(method, "GET", path);
                ex.text(200, "text/plain; version=0.0.4; charset=utf-8", metrics.render());
                return;
            }
            ServedModel model = served;
            if (model == null) {
                throw new ApiError(503, "server_error", "model_loading", null, "the model is loading");
            }
            switch (path) {
                case "/v1/models" -> {
                    requireMethod(method, "GET", path);
                    ObjectNode o = JSON.objectNode();
                    o.put("object", "list");
                    ObjectNode m = o.putArray("data").addObject();
                    m.put("id", model.id());
                    m.put("object", "model");
                    m.put("created", startedSeconds);
                    m.put("owned_by", "qlab");
                    ex.json(200, o);
                }
                case "/tokenize" -> {
                    requireMethod(method, "POST", path);
                    Fields f = new Fields(body(request));
                    JsonNode content = f.raw("content");
                    if (content == null || !content.isTextual()) {
                        throw ApiError.invalid("content", "\"content\" must be a string"
                                + (content == null ? "" : ", got " + Fields.describe(content)));
                    }
                    ObjectNode o = JSON.objectNode();
                    ArrayNode tokens = o.putArray("tokens");
                    for (int id : model.tokenizer().encode(content.textValue())) {
                        tokens.add(id);
                    }
                    ex.json(200, o);
                }
                case "/detokenize" -> {
                    requireMethod(method, "POST", path);
                    Fields f = new Fields(body(request));
                    JsonNode tokens = f.raw("tokens");
                    if (tokens == null) {
                        throw ApiError.invalid("tokens", "\"tokens\" must be an array of token ids");
                    }
                    int[] ids = Fields.tokenIds(tokens, "tokens", model.model().config().vocabSize());
                    ObjectNode o = JSON.objectNode();
                    o.put("content", model.tokenizer().decode(ids));
                    ex.json(200, o);
                }
                case "/v1/chat/completions" -> {
                    requireMethod(method, "POST", path);
                    completions.chat(body(request), ex);
                }
                case "/v1/completions" -> {
                    requireMethod(method, "POST", path);
                    completions.completion(body(request), ex);
                }
                default -> throw new ApiError(404, "invalid_request_error", "not_found", null, "no route " + path);
            }
        }

        private static void requireMethod(String method, String wanted, String path) {
            if (!method.equals(wanted)) {
                throw new ApiError(405, "invalid_request_error", "method_not_allowed", null,
                        path + " takes " + wanted + ", not " + method);
            }
        }

        /** The body as JSON, refused past the size limit (413) or when it is not JSON (400). */
        private JsonNode body(Request request) throws IOException {
            long limit = options.maxBodyBytes();
            long declared = request.getLength();
            if (declared > limit) {
                throw tooLarge(declared);
            }
            byte[] bytes;
            try (InputStream in = Content.Source.asInputStream(request)) {
                bytes = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, limit + 1));
            }
            if (bytes.length > limit) {
                throw tooLarge(-1);
            }
            if (bytes.length == 0) {
                throw ApiError.invalid(null, "the request body is empty; a JSON object is expected");
            }
            try {
                return Completions.mapper().readTree(bytes);
            } catch (JacksonException e) {
                throw ApiError.invalid(null, "the request body is not valid JSON: " + e.getOriginalMessage());
            }
        }

        private ApiError tooLarge(long declared) {
            return new ApiError(413, "invalid_request_error", "request_too_large", null,
                    "the request body " + (declared >= 0 ? "of " + declared + " bytes " : "") + "is larger than the limit of "
                            + options.maxBodyBytes() + " bytes (--max-body-mib)");
        }
    }

    /** Blocking writes on the handler's (virtual) thread. */
    private static final class JettyExchange implements Exchange {
        final Request request;
        final Response response;
        int status;
        boolean committed;
        Throwable failed;

        JettyExchange(Request request, Response response) {
            this.request = request;
            this.response = response;
        }

        @Override
        public void json(int code, JsonNode body) throws IOException {
            text(code, "application/json", body.toString());
        }

        void text(int code, String type, String body) throws IOException {
            status = code;
            response.setStatus(code);
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, type);
            write(true, body);
        }

        @Override
        public void startEvents() throws IOException {
            status = 200;
            response.setStatus(200);
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/event-stream; charset=utf-8");
            response.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-cache");
            write(false, "");
        }

        @Override
        public void event(String data) throws IOException {
            write(false, "data: " + data + "\n\n");
        }

        @Override
        public void endEvents() throws IOException {
            write(true, "");
        }

        @Override
        public void onDisconnect(Runnable action) {
            request.addFailureListener(t -> action.run());
        }

        private void write(boolean last, String text) throws IOException {
            committed = true;
            try (Blocker.Callback cb = Blocker.callback()) {
                response.write(last, ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)), cb);
                cb.block();
            } catch (IOException e) {
                failed = e;
                throw e;
            }
        }
    }
}
