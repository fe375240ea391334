package qlab.engine.eval;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import qlab.engine.QlabException;
import qlab.engine.model.LanguageModel;
import qlab.engine.util.OutputPaths;
import qlab.engine.util.Progress;

/**
 * The reference (fp32) model's log-probabilities over a text, computed once and kept on disk so
 * every quantized model is scored against the same numbers.
 *
 * <p>Two kinds. {@code full}: every log-probability of every scored position (exact KL; about
 * 4 bytes x vocabulary per position, ~600 KB for Qwen's 151,936 tokens). {@code compact}: the
 * top-k log-probabilities plus the probability mass of everything else (KL over k+1 outcomes, a
 * lower bound of the exact KL by the log-sum inequality; about 8k bytes per position).
 *
 * <p>The file is written and read one record at a time through a {@link FileChannel}, never mapped
 * whole: a full baseline of 20k tokens is ~6 GB, and mapped pages count as resident memory once
 * touched. Memory is one record whatever the text's length.
 *
 * <p>File: "QLABLP01", int32 header length, JSON header, padding to 64 bytes, then one
 * fixed-size little-endian record per scored position:
 * full: int32 target, int32 argmax, f32 logprob[vocab];
 * compact: int32 target, int32 argmax, f32 logprob(target), f32 unused, f64 tail mass,
 * int32 ids[k], f32 logprob[k] (ids by descending probability).
 */
public final class LogProbBaseline {

    public enum Kind { FULL, COMPACT }

    private static final byte[] MAGIC = "QLABLP01".getBytes(StandardCharsets.US_ASCII);

    private final Path path;
    private final Kind kind;
    private final int vocab;
    private final int topK;
    private final int positions;
    private final String key;
    private final long dataStart;
    private final long recordBytes;

    private LogProbBaseline(Path path, Kind kind, int vocab, int topK, int positions, String key, long dataStart) {
        this.path = path;
        this.kind = kind;
        this.vocab = vocab;
        this.topK = topK;
        this.positions = positions;
        this.key = key;
        this.dataStart = dataStart;
        this.recordBytes = recordBytes(kind, vocab, topK);
    }

    static long recordBytes(Kind kind, int vocab, int topK) {
        return kind == Kind.FULL ? 8L + 4L * vocab : 24L + 8L * topK;
    }

    public Kind kind() {
        return kind;
    }

    public int vocab() {
        return vocab;
    }

    public int topK() {
        return topK;
    }

    public int positions() {
        return positions;
    }

    public String key() {
        return key;
    }

    public Path path() {
        return path;
    }

    /** A reader holding one record at a time; not thread-safe, one per scoring pass. */
    public Reader reader() {
        try {
            return new Reader(FileChannel.open(path, StandardOpenOption.READ));
        } catch (IOException e) {
            throw new QlabException(path + ": cannot read the baseline: " + e.getMessage());
        }
    }

    /** The records of a baseline, read one position at a time ({@link #load}) into a reused buffer. */
    public final class Reader implements AutoCloseable {
        private final FileChannel channel;
        private final ByteBuffer record;
        private final float[] logProbs;
        private int loaded = -1;

        private Reader(FileChannel channel) {
            this.channel = channel;
            this.record = ByteBuffer.allocate(Math.toIntExact(recordBytes)).order(ByteOrder.LITTLE_ENDIAN);
            this.logProbs = kind == Kind.FULL ? new float[vocab] : null;
        }

        /** Reads position p's record; the accessors below then describe it. */
        public void load(int p) {
            if (p < 0 || p >= positions) {
                throw new IndexOutOfBoundsException("position " + p + " of " + positions);
            }
            record.clear();
            long at = dataStart + p * recordBytes;
            try {
                while (record.hasRemaining()) {
                    if (channel.read(record, at + record.position()) < 0) {
                        throw new QlabException(path + ": record " + p + " is past the end of the file (truncated?)");
                    }
                }
            } catch (IOException e) {
                throw new QlabException(path + ": cannot read record " + p + ": " + e.getMessage());
            }
            if (logProbs != null) {
                record.position(8);
                record.asFloatBuffer().get(logProbs);
            }
            loaded = p;
        }

        /** The position whose record is loaded, -1 before the first {@link #load}. */
        public int position() {
            return loaded;
        }

        public int target() {
            return record.getInt(0);
        }

        public int argmax() {
            return record.getInt(4);
        }

        /** log p(target) under the reference. */
        public double targetLogProb() {
            return kind == Kind.FULL ? logProbs[target()] : record.getFloat(8);
        }

        /** Full baselines: log p(token). */
        public float logProb(int token) {
            return logProbs[token];
        }

        /** Compact baselines: the probability mass outside the top k. */
        public double tailMass() {
            return record.getDouble(16);
        }

        public int topId(int i) {
            return record.getInt(24 + 4 * i);
        }

        public float topLogProb(int i) {
            return record.getFloat(24 + 4 * topK + 4 * i);
        }

        @Override
        public void close() {
            try {
                channel.close();
            } catch (IOException e) {
                throw new QlabException(path + ": cannot close the baseline: " + e.getMessage());
            }
        }
    }

    /**
     * Computes the baseline of {@code model} over {@code tokens} and writes it atomically to
     * {@code out} (a temporary file, then a rename).
     */
    public static LogProbBaseline create(LanguageModel model, int[] tokens, int ctx, ScoringMode mode, Kind kind,
            int topK, String key, Path out) {
        return create(model, tokens, ctx, mode, kind, topK, key, out, Progress.NONE);
    }

    /** {@link #create}, reporting the tokens put through the model ({@link WindowScorer#tokensProcessed}). */
    public static LogProbBaseline create(LanguageModel model, int[] tokens, int ctx, ScoringMode mode, Kind kind,
            int topK, String key, Path out, Progress progress) {
        int vocab = model.config().vocabSize();
        if (kind == Kind.COMPACT && (topK < 1 || topK >= vocab)) {
            throw new QlabException("--top-k must be between 1 and the vocabulary size - 1, got " + topK);
        }
        int positions = Windows.scoredCount(Windows.plan(tokens.length, ctx, mode));
        int k = kind == Kind.FULL ? 0 : topK;
        long rec = recordBytes(kind, vocab, k);
        ObjectNode h = new ObjectMapper().createObjectNode();
        h.put("key", key).put("kind", kind.name().toLowerCase()).put("vocab", vocab).put("top_k", k)
                .put("positions", positions).put("ctx", ctx).put("mode", mode.id());
        byte[] header = h.toString().getBytes(StandardCharsets.UTF_8);
        long dataStart = align64(MAGIC.length + 4 + header.length);
        // A name of its own per writer: concurrent workers may compute the same baseline.
        Path tmp = out.resolveSibling(out.getFileName() + "." + ProcessHandle.current().pid() + "-" + Thread.currentThread().threadId() + ".tmp");
        OutputPaths.prepareFile(out);
        try {
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                ByteBuffer head = ByteBuffer.allocate((int) dataStart).order(ByteOrder.LITTLE_ENDIAN);
                head.put(MAGIC).putInt(header.length).put(header).clear();
                writeFully(ch, head, 0);
                ByteBuffer record = ByteBuffer.allocate(Math.toIntExact(rec)).order(ByteOrder.LITTLE_ENDIAN);
                boolean[] inTop = kind == Kind.COMPACT ? new boolean[vocab] : null;
                WindowScorer.run(model, tokens, ctx, mode, (i, target, logits, off) -> {
                    double lse = WindowScorer.logSumExp(logits, off, vocab);
                    record.clear();
                    record.putInt(0, target);
                    if (kind == Kind.FULL) {
                        int best = 0;
                        for (int j = 0; j < vocab; j++) {
                            record.putFloat(8 + 4 * j, (float) (logits[off + j] - lse));
                            if (logits[off + j] > logits[off + best]) {
                                best = j;
                            }
                        }
                        record.putInt(4, best);
                    } else {
                        int[] top = TopK.indices(logits, off, vocab, k);
                        for (int j = 0; j < k; j++) {
                            inTop[top[j]] = true;
                            record.putInt(24 + 4 * j, top[j]);
                            record.putFloat(24 + 4 * k + 4 * j, (float) (logits[off + top[j]] - lse));
                        }
                        double tail = 0;
                        for (int j = 0; j < vocab; j++) {
                            if (!inTop[j]) {
                                tail += Math.exp(logits[off + j] - lse);
                            }
                        }
                        for (int j = 0; j < k; j++) {
                            inTop[top[j]] = false;
                        }
                        record.putInt(4, top[0]);
                        record.putFloat(8, (float) (logits[off + target] - lse));
                        record.putFloat(12, 0f);
                        record.putDouble(16, tail);
                    }
                    writeFully(ch, record, dataStart + i * rec);
                }, progress);
                ch.force(true);
            }
            Files.move(tmp, out, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException | UncheckedIOException e) {
            throw new QlabException(out + ": cannot write the baseline: " + e.getMessage());
        }
        return open(out);
    }

    private static void writeFully(FileChannel ch, ByteBuffer buf, long at) {
        try {
            long pos = at;
            while (buf.hasRemaining()) {
                pos += ch.write(buf, pos);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static LogProbBaseline open(Path file) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = ch.size();
            ByteBuffer first = ByteBuffer.allocate((int) Math.min(size, MAGIC.length + 4)).order(ByteOrder.LITTLE_ENDIAN);
            readFully(ch, first, 0);
            byte[] magic = new byte[Math.min(MAGIC.length, first.limit())];
            first.get(0, magic);
            if (size < MAGIC.length + 4 || !Arrays.equals(magic, MAGIC)) {
                throw new QlabException(file + ": not a qlab log-probability baseline (bad magic)");
            }
            int hl = first.getInt(MAGIC.length);
            if (hl < 2 || MAGIC.length + 4L + hl > size) {
                throw new QlabException(file + ": header length " + hl + " is past the end of the file");
            }
            ByteBuffer hb = ByteBuffer.allocate(hl);
            readFully(ch, hb, MAGIC.length + 4);
            JsonNode h;
            try {
                h = new ObjectMapper().readTree(new String(hb.array(), StandardCharsets.UTF_8));
            } catch (IOException e) {
                throw new QlabException(file + ": header is not valid JSON");
            }
            Kind kind = "full".equals(h.path("kind").asText()) ? Kind.FULL : Kind.COMPACT;
            int vocab = h.path("vocab").asInt();
            int topK = h.path("top_k").asInt();
            int positions = h.path("positions").asInt();
            long start = align64(MAGIC.length + 4 + hl);
            long need = start + recordBytes(kind, vocab, topK) * positions;
            if (vocab < 1 || positions < 1 || topK < 0 || (kind == Kind.COMPACT && topK < 1) || size != need) {
                throw new QlabException(file + ": field \"positions\" says " + positions + " records of vocabulary " + vocab
                        + ", which needs " + need + " bytes; the file has " + size + " (truncated?)");
            }
            return new LogProbBaseline(file, kind, vocab, topK, positions, h.path("key").asText(), start);
        } catch (IOException e) {
            throw new QlabException(file + ": cannot read the baseline: " + e.getMessage());
        }
    }

    private static void readFully(FileChannel ch, ByteBuffer buf, long at) throws IOException {
        while (buf.hasRemaining()) {
            if (ch.read(buf, at + buf.position()) < 0) {
                break;
            }
        }
        buf.flip();
    }

    private static long align64(long n) {
        return (n + 63) & ~63L;
    }

}
