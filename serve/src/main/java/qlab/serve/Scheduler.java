package qlab.serve;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import qlab.engine.model.KvCache;
import qlab.engine.model.Transformer;
import qlab.engine.sampling.Sampler;

/**
 * Continuous batching: a fixed number of slots, a bounded queue in front of them, and one loop
 * that, per step, runs one prefill pass of the oldest sequence still reading its prompt, then one
 * decode step for every sequence already generating. Sequences join at the next step and leave
 * when done, so nothing waits for the slowest; a long prompt is read a chunk per step, between
 * the running streams' tokens.
 *
 * <p>A sequence's tokens do not depend on what runs beside it: each has its own sampler and seed,
 * its prompt is read in the same passes whatever else runs (whole {@link PrefixCache#BLOCK_TOKENS}
 * blocks, the partial last block alone), and decode rows go through the engine in groups small
 * enough to stay on the single-sequence kernels (unless tiled decode is asked for: the token tile
 * sums in another order from 8 sequences on, which is faster but not bit for bit the same).
 *
 * <p>The scheduler owns every KV cache: the running sequences' and the {@link PrefixCache}.
 */
public final class Scheduler implements AutoCloseable {

    /** Rows per decode pass that keep the kernels of a single sequence (QuantizedMatrix tiles from 8). */
    static final int EXACT_DECODE_GROUP = qlab.quant.QuantizedMatrix.TILED_FROM_TOKENS - 1;

    /** Thrown by {@link #submit} when the queue is full. */
    public static final class QueueFull extends RuntimeException {
        QueueFull() {
            super("the server is busy: every slot and the whole queue are taken", null, false, false);
        }
    }

    /** A submitted sequence: {@link #cancel} ends it and frees its KV at the next step. */
    public final class Ticket {
        private volatile boolean cancelled;

        public void cancel() {
            cancelled = true;
            wake();
        }
    }

    public record Settings(int parallel, int queue, int ctx, int prefillChunk, boolean tiledDecode, long prefixCacheBytes) {
        public Settings {
            if (prefillChunk < PrefixCache.BLOCK_TOKENS || prefillChunk % PrefixCache.BLOCK_TOKENS != 0) {
                throw new qlab.engine.QlabException("--prefill-chunk must be a positive multiple of "
                        + PrefixCache.BLOCK_TOKENS + ", got " + prefillChunk);
            }
        }
    }

    private final Transformer model;
    private final Set<Integer> stopIds;
    private final Settings settings;
    private final ServerMetrics metrics;
    private final PrefixCache prefixCache;
    private final int vocab;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition work = lock.newCondition();
    private final ArrayDeque<Sequence> queue = new ArrayDeque<>();
    private final List<Sequence> running = new ArrayList<>();
    private final Thread loop;
    private volatile boolean closed;

    public Scheduler(Transformer model, Set<Integer> stopIds, Settings settings, ServerMetrics metrics) {
        this.model = model;
        this.stopIds = Set.copyOf(stopIds);
        this.settings = settings;
        this.metrics = metrics;
        this.prefixCache = new PrefixCache(settings.prefixCacheBytes());
        this.vocab = model.config().vocabSize();
        this.loop = Thread.ofPlatform().name("qlab-scheduler").unstarted(this::run);
        loop.start();
    }

    public Settings settings() {
        return settings;
    }

    /**
     * Queues a sequence; it starts when a slot is free.
     *
     * @throws QueueFull when the queue already holds {@link Settings#queue} sequences
     */
    public Ticket submit(SequenceRequest request) {
        Sequence s = new Sequence(request, new Ticket());
        lock.lock();
        try {
            if (queue.size() >= settings.queue() && metrics.running + queue.size() >= settings.parallel()) {
                throw new QueueFull();
            }
            queue.add(s);
            metrics.queueDepth = queue.size();
            work.signal();
        } finally {
            lock.unlock();
        }
        return s.ticket;
    }

    private void wake() {
        lock.lock();
        try {
            work.signal();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void close() {
        closed = true;
        wake();
        try {
            loop.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ----------------------------------------------------------------------------------------
    // The loop

    private void run() {
        while (!closed) {
            admit();
            if (running.isEmpty()) {
                lock.lock();
                try {
                    while (queue.isEmpty() && !closed) {
                        work.awaitUninterruptibly();
                    }
                } finally {
                    lock.unlock();
                }
                continue;
            }
            try {
                step();
            } catch (RuntimeException e) {
                // A fault outside the model passes (which fail only their own sequences) is a bug; the
                // running sequences end with it, and the loop goes on serving.
                for (Sequence s : running) {
                    if (!s.done) {
                        s.fail(e);
                    }
                }
                running.clear();
                updateGauges();
            }
        }
        for (Sequence s : running) {
            s.request.listener().failed("the server is shutting down");
        }
        running.clear();
    }

    /** Moves queued sequences into free slots; sequences cancelled while queued are dropped. */
    private void admit() {
        List<Sequence> admitted = new ArrayList<>();
        lock.lock();
        try {
            while (running.size() + admitted.size() < settings.parallel() && !queue.isEmpty()) {
                admitted.add(queue.poll());
            }
            metrics.queueDepth = queue.size();
        } finally {
            lock.unlock();
        }
        for (Sequence s : admitted) {
            if (s.ticket.cancelled) {
                metrics.cancelled.increment();
                s.request.listener().failed("cancelled");
                continue;
            }
            try {
                s.start();
                running.add(s);
            } catch (RuntimeException e) {
                s.request.listener().failed(e.getMessage());
            }
        }
        updateGauges();
    }

    private void step() {
        for (Sequence s : running) {
            if (s.ticket.cancelled && !s.done) {
                s.done = true;
                metrics.cancelled.increment();
                s.request.listener().failed("cancelled");
            }
        }
        running.removeIf(s -> s.done);

        // One prefill pass: the earliest admitted sequence still reading its prompt.
        for (Sequence s : running) {
            if (s.prefilling()) {
                try {
                    s.prefillPass();
                } catch (RuntimeException e) {
                    s.fail(e);
                }
                break;
            }
        }
        // Prompts that are done (or came whole from the prefix cache) draw their first token.
        for (Sequence s : running) {
            if (!s.done && s.pendingLogits != null) {
                float[] logits = s.pendingLogits;
                s.pendingLogits = null;
                if (s.request.maxTokens() == 0) {
                    s.finish(SequenceListener.Finish.LENGTH);
                } else {
                    s.accept(logits, 0);
                }
            }
        }
        // One decode step for every generating sequence.
        List<Sequence> decoding = new ArrayList<>();
        for (Sequence s : running) {
            if (!s.done && s.next >= 0) {
                decoding.add(s);
            }
        }
        int group = settings.tiledDecode() ? Integer.MAX_VALUE : EXACT_DECODE_GROUP;
        long t0 = System.nanoTime();
        for (int from = 0; from < decoding.size(); from += group) {
            List<Sequence> g = decoding.subList(from, Math.min(decoding.size(), from + group));
            int[] tokens = new int[g.size()];
            KvCache[] caches = new KvCache[g.size()];
            for (int b = 0; b < g.size(); b++) {
                tokens[b] = g.get(b).next;
                caches[b] = g.get(b).cache;
                g.get(b).next = -1;
            }
            float[] logits;
            try {
                logits = model.decodeBatch(tokens, caches);
            } catch (RuntimeException e) {
                g.forEach(s -> s.fail(e));
                continue;
            }
            for (int b = 0; b < g.size(); b++) {
                g.get(b).accept(logits, b * vocab);
            }
        }
        if (!decoding.isEmpty()) {
            metrics.decodeNanos.addAndGet(System.nanoTime() - t0);
        }
        running.removeIf(s -> s.done);
        updateGauges();
    }

    private void updateGauges() {
        long kv = 0;
        for (Sequence s : running) {
            kv += s.cache.byteSize();
        }
        metrics.running = running.size();
        metrics.kvBytes = kv;
        metrics.prefixCacheBytes = prefixCache.bytes();
    }

    // ----------------------------------------------------------------------------------------
    // One sequence

    private final class Sequence {
        final SequenceRequest request;
        final Ticket ticket;
        final int[] prompt;
        KvCache cache;
        Sampler sampler;
        int[] context;          // prompt and generated tokens, for the repetition penalty
        int length;             // valid entries of context
        int generated;
        int cached;             // prompt tokens taken from the prefix cache
        float[] pendingLogits;  // the last prompt position's logits, until the first token is drawn
        int next = -1;          // a drawn token still to be fed, or -1
        TokenLogprob[] promptScores;
        boolean done;

        Sequence(SequenceRequest request, Ticket ticket) {
            this.request = request;
            this.ticket = ticket;
            this.prompt = request.prompt();
        }

        void start() {
            int capacity = Math.min(settings.ctx(), prompt.length + Math.max(0, request.maxTokens() - 1) + 1);
            cache = model.newCache(Math.max(capacity, prompt.length));
            sampler = new Sampler(request.sampling());
            context = Arrays.copyOf(prompt, prompt.length + request.maxTokens());
            length = prompt.length;
            metrics.promptTokens.add(prompt.length);
            if (request.echo()) {
                promptScores = new TokenLogprob[prompt.length];
                return;
            }
            PrefixCache.Hit hit = prefixCache.lookup(prompt);
            for (PrefixCache.Entry e : hit.blocks()) {
                cache.append(e.kv());
            }
            if (hit.end() != null) {
                cache.append(hit.end().kv());
                pendingLogits = hit.end().logits();
            }
            cached = hit.tokens();
            if (cached > 0) {
                metrics.prefixHits.increment();
                metrics.prefixReusedTokens.add(cached);
            }
        }

        boolean prefilling() {
            return !done && pendingLogits == null && next < 0 && generated == 0 && cache.length() < prompt.length;
        }

        /**
         * One forward pass over the next part of the prompt. Without echo: whole blocks, at most a
         * chunk, then the partial last block alone (so passes start at block boundaries, as after a
         * prefix-cache hit). With echo every position's logits are kept, and a short remainder joins
         * the pass before it, so no pass is narrower than a block unless the prompt is.
         */
        void prefillPass() {
            int n = prompt.length;
            int p = cache.length();
            int block = PrefixCache.BLOCK_TOKENS;
            int end;
            if (request.echo()) {
                end = Math.min(n, p + settings.prefillChunk());
                if (n - end < block) {
                    end = n;
                }
            } else {
                int whole = n / block * block;
                end = p < whole ? Math.min(whole, p + settings.prefillChunk()) : n;
            }
            int[] ids = Arrays.copyOfRange(prompt, p, end);
            int first = request.echo() ? 0 : ids.length - 1;
            long t0 = System.nanoTime();
            float[] logits = model.forward(ids, cache, first);
            metrics.prefillNanos.addAndGet(System.nanoTime() - t0);
            metrics.prefillTokens.add(ids.length);
            if (request.echo()) {
                int top = Math.max(0, request.topLogprobs());
                for (int r = 0; r < ids.length && p + r + 1 < n; r++) {
                    promptScores[p + r + 1] = TokenLogprob.of(logits, r * vocab, vocab, prompt[p + r + 1], top);
                }
            }
            if (end < n) {
                return;
            }
            float[] last = Arrays.copyOfRange(logits, (ids.length - 1 - first) * vocab, (ids.length - first) * vocab);
            if (request.echo()) {
                request.listener().promptScored(promptScores);
            } else {
                prefixCache.store(prompt, cache, last);
            }
            pendingLogits = last;
        }

        /** Draws the next token from logits[offset .. offset + vocab) and reports it. */
        void accept(float[] logits, int offset) {
            float[] row = offset == 0 && logits.length == vocab ? logits : Arrays.copyOfRange(logits, offset, offset + vocab);
            int id = sampler.sample(row, context, length);
            if (!request.ignoreEos() && stopIds.contains(id)) {
                finish(SequenceListener.Finish.STOP);
                return;
            }
            TokenLogprob scored = request.topLogprobs() >= 0
                    ? TokenLogprob.of(row, 0, vocab, id, request.topLogprobs())
                    : new TokenLogprob(id, Double.NaN, new int[0], new double[0]);
            generated++;
            metrics.generatedTokens.increment();
            context[length++] = id;
            boolean more = request.listener().token(scored);
            if (!more) {
                finish(SequenceListener.Finish.STOP);
            } else if (generated >= request.maxTokens() || cache.length() >= cache.capacity()) {
                finish(SequenceListener.Finish.LENGTH);
            } else {
                next = id;
            }
        }

        void finish(SequenceListener.Finish reason) {
            done = true;
            request.listener().finished(reason, prompt.length, generated, cached);
        }

        void fail(RuntimeException e) {
            done = true;
            request.listener().failed(e.getMessage() == null ? e.toString() : e.getMessage());
        }
    }
}
