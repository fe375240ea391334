package qlab.engine.model;

/** The KV cache's storage: one type for keys and one for values (llama.cpp's -ctk and -ctv). */
public record KvTypes(KvType keys, KvType values) {

    public static final KvTypes F32 = new KvTypes(KvType.F32, KvType.F32);

    public KvTypes {
        if (keys == null || values == null) {
            throw new IllegalArgumentException("KV types must not be null");
        }
    }

    /** Bytes one position takes in one layer: K and V of every KV head. */
    public long bytesPerTokenPerLayer(ModelConfig c) {
        return (long) c.numKvHeads() * (keys.bytesPerRow(c.headDim()) + values.bytesPerRow(c.headDim()));
    }

    /** e.g. {@code f32}, or {@code k=q8_0,v=q4_0} when they differ. */
    @Override
    public String toString() {
        return keys.name().equals(values.name()) ? keys.name() : "k=" + keys.name() + ",v=" + values.name();
    }
}
