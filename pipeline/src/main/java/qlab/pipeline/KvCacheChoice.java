package qlab.pipeline;

import java.io.Serializable;

/**
 * The KV cache types a config runs with, for keys and values (llama.cpp's {@code -ctk}/{@code -ctv}):
 * names from {@code qlab.quant.KvFormats}. The cache belongs to running a checkpoint, not to
 * quantizing it: one checkpoint file is measured with each choice.
 */
public record KvCacheChoice(String keys, String values) implements Serializable {

    /** The engine's default: keys and values in f32. */
    public static final KvCacheChoice F32 = new KvCacheChoice("f32", "f32");

    public boolean isF32() {
        return equals(F32);
    }

    /** {@code q8_0} when keys and values share a type, else {@code k=q8_0,v=q4_0}. */
    public String yamlName() {
        return keys.equals(values) ? keys : "k=" + keys + ",v=" + values;
    }

    /** The inverse of {@link #yamlName()}; null for a text of another form. */
    public static KvCacheChoice parse(String text) {
        if (text == null || text.isEmpty()) {
            return null;
        }
        if (!text.startsWith("k=")) {
            return new KvCacheChoice(text, text);
        }
        String[] parts = text.split(",", -1);
        if (parts.length != 2 || !parts[1].startsWith("v=")) {
            return null;
        }
        return new KvCacheChoice(parts[0].substring(2), parts[1].substring(2));
    }

    @Override
    public String toString() {
        return yamlName();
    }
}
