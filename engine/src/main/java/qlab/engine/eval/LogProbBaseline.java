package qlab.engine.eval;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import qlab.engine.QlabException;
import qlab.engine.model.LanguageModel;

/**
 * The reference (fp32) model's log-probabilities over a text, computed once and kept on disk so
 * every quantized model is scored against the same numbers.
 *
 * <p>Two kinds. {@code full}: every log-probability of every scored position (exact KL; about
 * 4 bytes x vocabulary per position, ~600 KB for Qwen's 151,936 tokens). {@code compact}: the
 * top-k log-probabilities plus the probability mass of everything else (KL over k+1 outcomes, a
 * lower bound of the exact KL by the log-sum inequality; about 8k bytes per position).
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
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final Path path;
    private final Kind kind;
    private final int vocab;
    private final int topK;
    private final int positions;
    private final String key;
    private final MemorySegment records;
    private final long recordBytes;

    private LogProbBaseline(Path path, Kind kind, int vocab, int topK, int positions, String key, MemorySegment records) {
        this.path = path;
        this.kind = kind;
        this.vocab = vocab;
        this.topK = topK;
        this.positions = positions;
        this.key = key;
        this.records = records;
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

    public int target(int p) {
        return records.get(I32, p * recordBytes);
    }

    public int argmax(int p) {
        return records.get(I32, p * recordBytes + 4);
    }

    /** log p(target) under the reference. */
    public double targetLogProb(int p) {
        return kind == Kind.FULL ? logProb(p, target(p)) : records.get(F32, p * recordBytes + 8);
    }

    /** Full baselines: log p(token) at position p. */
    public float logProb(int p, int token) {
        return records.get(F32, p * recordBytes + 8 + 4L * token);
    }

    /** Compact baselines: the probability mass outside the top k. */
    public double tailMass(int p) {
        return records.get(F64, p * recordBytes + 16);
    }

    public int topId(int p, int i) {
        return records.get(I32, p * recordBytes + 24 + 4L * i);
    }

    public float topLogProb(int p, int i) {
        return records.get(F32, p * recordBytes + 24 + 4L * topK + 4L * i);
    }

    /**
     * Computes the baseline of {@code model} over {@code tokens} and writes it atomically to
     * {@code out} (a temporary file, then a rename).
     */
    public static LogProbBaseline create(LanguageModel model, int[] tokens, int ctx, ScoringMode mode, Kind kind,
            int topK, String key, Path out) {
        int vocab = model.config().vocabSize();
        if (kind == Kind.COMPACT && (topK < 1 || topK >= vocab)) {
            throw new QlabException("--top-k must be between 1 and the vocabulary size - 1, got " + topK);
        }
        int positions = Windows.scoredCount(Windows.plan(tokens.length, ctx, mode));
        long rec = recordBytes(kind, vocab, kind == Kind.FULL ? 0 : topK);
        ObjectNode h = new ObjectMapper().createObjectNode();
        h.put("key", key).put("kind", kind.name().toLowerCase()).put("vocab", vocab).put("top_k", kind == Kind.FULL ? 0 : topK)
                .put("positions", positions).put("ctx", ctx).put("mode", mode.id());
        byte[] header = h.toString().getBytes(StandardCharsets.UTF_8);
        long dataStart = align64(MAGIC.length + 4 + header.length);
        // A name of its own per writer: concurrent workers may compute the same baseline.
        Path tmp = out.resolveSibling(out.getFileName() + "." + ProcessHandle.current().pid() + "-" + Thread.currentThread().threadId() + ".tmp");
        try {
            Files.createDirectories(out.toAbsolutePath().getParent());
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.READ,
                    StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING); Arena arena = Arena.ofConfined()) {
                MemorySegment seg = ch.map(FileChannel.MapMode.READ_WRITE, 0, dataStart + rec * positions, arena);
                MemorySegment.copy(MAGIC, 0, seg, ValueLayout.JAVA_BYTE, 0, MAGIC.length);
                seg.set(I32, MAGIC.length, header.length);
                MemorySegment.copy(header, 0, seg, ValueLayout.JAVA_BYTE, MAGIC.length + 4, header.length);
                int k = topK;
                WindowScorer.run(model, tokens, ctx, mode, (i, target, logits, off) -> {
                    long base = dataStart + i * rec;
                    double lse = WindowScorer.logSumExp(logits, off, vocab);
                    seg.set(I32, base, target);
                    if (kind == Kind.FULL) {
                        int best = 0;
                        for (int j = 0; j < vocab; j++) {
                            seg.set(F32, base + 8 + 4L * j, (float) (logits[off + j] - lse));
                            if (logits[off + j] > logits[off + best]) {
                                best = j;
                            }
                        }
                        seg.set(I32, base + 4, best);
                    } else {
                        int[] top = TopK.indices(logits, off, vocab, k);
                        boolean[] inTop = new boolean[vocab];
                        for (int j = 0; j < k; j++) {
                            inTop[top[j]] = true;
                            seg.set(I32, base + 24 + 4L * j, top[j]);
                            seg.set(F32, base + 24 + 4L * k + 4L * j, (float) (logits[off + top[j]] - lse));
                        }
                        double tail = 0;
                        for (int j = 0; j < vocab; j++) {
                            if (!inTop[j]) {
                                tail += Math.exp(logits[off + j] - lse);
                            }
                        }
                        seg.set(I32, base + 4, top[0]);
                        seg.set(F32, base + 8, (float) (logits[off + target] - lse));
                        seg.set(F64, base + 16, tail);
                    }
                });
                seg.force();
            }
            Files.move(tmp, out, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new QlabException(out + ": cannot write the baseline: " + e.getMessage());
        }
        return open(out);
    }

    public static LogProbBaseline open(Path file) {
        MemorySegment all;
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            all = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size(), Arena.ofAuto());
        } catch (IOException e) {
            throw new QlabException(file + ": cannot read the baseline: " + e.getMessage());
        }
        if (all.byteSize() < MAGIC.length + 4
                || !java.util.Arrays.equals(all.asSlice(0, MAGIC.length).toArray(ValueLayout.JAVA_BYTE), MAGIC)) {
            throw new QlabException(file + ": not a qlab log-probability baseline (bad magic)");
        }
        int hl = all.get(I32, MAGIC.length);
        if (hl < 2 || MAGIC.length + 4L + hl > all.byteSize()) {
            throw new QlabException(file + ": header length " + hl + " is past the end of the file");
        }
        JsonNode h;
        try {
            h = new ObjectMapper().readTree(new String(all.asSlice(MAGIC.length + 4, hl).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new QlabException(file + ": header is not valid JSON");
        }
        Kind kind = "full".equals(h.path("kind").asText()) ? Kind.FULL : Kind.COMPACT;
        int vocab = h.path("vocab").asInt();
        int topK = h.path("top_k").asInt();
        int positions = h.path("positions").asInt();
        long start = align64(MAGIC.length + 4 + hl);
        long need = start + recordBytes(kind, vocab, topK) * positions;
        if (vocab < 1 || positions < 1 || all.byteSize() != need) {
            throw new QlabException(file + ": field \"positions\" says " + positions + " records of vocabulary " + vocab
                    + ", which needs " + need + " bytes; the file has " + all.byteSize() + " (truncated?)");
        }
        return new LogProbBaseline(file, kind, vocab, topK, positions, h.path("key").asText(), all.asSlice(start));
    }

    private static long align64(long n) {
        return (n + 63) & ~63L;
    }

}
