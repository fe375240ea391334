package qlab.engine.safetensors;

import java.util.Arrays;

/**
 * One entry of a safetensors header. {@code begin}/{@code end} are byte offsets relative to the
 * start of the data section (which follows the 8-byte length and the JSON header).
 */
public record TensorInfo(String name, DType dtype, long[] shape, long begin, long end) {

    public long elementCount() {
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        return n;
    }

    public long byteLength() {
        return end - begin;
    }

    @Override
    public String toString() {
        return name + " " + dtype + " " + Arrays.toString(shape);
    }
}
