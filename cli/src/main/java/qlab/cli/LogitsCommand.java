package qlab.cli;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import qlab.engine.QlabException;
import qlab.engine.model.Model;
import qlab.engine.model.Transformer;
import qlab.engine.util.WorkerPool;

@Command(name = "logits", mixinStandardHelpOptions = true,
        description = "Write the float32 logits [ids x vocab] of one forward pass (little-endian, a row per position).",
        footer = {"", "Example:", "  ./qlab logits --model models/small --ids 1,2,3 --out logits.f32"})
final class LogitsCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--model", required = true, description = "Model directory, quantized file or GGUF file.")
    Path model;

    @Option(names = "--ids", required = true, description = "Token ids, e.g. 1,2,3.")
    String ids;

    @Option(names = "--out", required = true, description = "Output file.")
    Path out;

    @Mixin
    EngineOptions threads;

    @Override
    public Integer call() {
        int[] tokens = IdList.parse("--ids", ids);
        Model m = Models.open(model);
        float[] logits;
        try (WorkerPool pool = threads.pool()) {
            Transformer tf = new Transformer(m, pool, threads.kvTypes());
            logits = tf.forward(tokens, tf.newCache(tokens.length), true);
        }
        ByteBuffer buf = ByteBuffer.allocate(logits.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        buf.asFloatBuffer().put(logits);
        Path tmp = out.resolveSibling(out.getFileName() + "." + ProcessHandle.current().pid() + "-" + Thread.currentThread().threadId() + ".tmp");
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            while (buf.hasRemaining()) {
                ch.write(buf);
            }
            ch.close();
            Files.move(tmp, out, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new QlabException(out + ": cannot write: " + e.getMessage());
        }
        spec.commandLine().getErr().printf("wrote %s: %d x %d float32%n", out, tokens.length, m.config().vocabSize());
        return 0;
    }
}
