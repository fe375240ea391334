package qlab.engine.gguf;

import java.util.Arrays;

/**
 * One tensor info of a GGUF file. {@code ne} is in ggml's order, fastest-varying first: a matrix
 * of {@code rows x cols} has {@code ne = [cols, rows]}. {@code offset} is relative to the start of
 * the data section; {@code bytes} excludes the alignment padding after the tensor.
 */
public record GgufTensor(String name, long[] ne, GgufTensorType type, long offset, long bytes) {

    public long elementCount() {
        long n = 1;
        for (long d : ne) {
            n *= d;
        }
        return n;
    }

    /** The shape in row-major order (as safetensors and qlab write it): ne reversed. */
    public long[] shape() {
        long[] s = new long[ne.length];
        for (int i = 0; i < ne.length; i++) {
            s[i] = ne[ne.length - 1 - i];
        }
        return s;
    }

    public long end() {
        return offset + bytes;
    }

    @Override
    public String toString() {
        return name + " " + type + " " + Arrays.toString(ne);
    }
}
