package qlab.pipeline.results;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.apache.parquet.bytes.BytesInput;
import org.apache.parquet.compression.CompressionCodecFactory;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.xerial.snappy.Snappy;
import qlab.engine.QlabException;

/**
 * Parquet's page compression for result files, SNAPPY (and UNCOMPRESSED) through snappy-java
 * directly: parquet-hadoop's own codec factory loads Hadoop's codec classes, and Hadoop is not on
 * the runtime classpath. Parquet's SNAPPY pages are raw Snappy blocks, which is what
 * {@link Snappy#compress(byte[])} writes, so files of either writer read the same.
 */
final class SnappyCodecs implements CompressionCodecFactory {

    static final SnappyCodecs INSTANCE = new SnappyCodecs();

    private SnappyCodecs() {
    }

    @Override
    public BytesInputCompressor getCompressor(CompressionCodecName codec) {
        boolean snappy = supported(codec);
        return new BytesInputCompressor() {
            @Override
            public BytesInput compress(BytesInput bytes) throws IOException {
                return snappy ? BytesInput.from(Snappy.compress(bytes.toByteArray())) : bytes;
            }

            @Override
            public CompressionCodecName getCodecName() {
                return codec;
            }

            @Override
            public void release() {
            }
        };
    }

    @Override
    public BytesInputDecompressor getDecompressor(CompressionCodecName codec) {
        boolean snappy = supported(codec);
        return new BytesInputDecompressor() {
            @Override
            public BytesInput decompress(BytesInput bytes, int uncompressedSize) throws IOException {
                return snappy ? BytesInput.from(uncompress(bytes.toByteArray(), uncompressedSize)) : bytes;
            }

            @Override
            public void decompress(ByteBuffer input, int compressedSize, ByteBuffer output, int uncompressedSize)
                    throws IOException {
                byte[] in = new byte[compressedSize];
                input.get(in);
                output.put(snappy ? uncompress(in, uncompressedSize) : in, 0, uncompressedSize);
            }

            @Override
            public void release() {
            }
        };
    }

    @Override
    public void release() {
    }

    private static boolean supported(CompressionCodecName codec) {
        return switch (codec) {
            case SNAPPY -> true;
            case UNCOMPRESSED -> false;
            default -> throw new QlabException("Parquet compression " + codec
                    + " is not supported (result files are written with SNAPPY)");
        };
    }

    private static byte[] uncompress(byte[] in, int uncompressedSize) throws IOException {
        byte[] out = Snappy.uncompress(in);
        if (out.length != uncompressedSize) {
            throw new IOException("a Snappy page holds " + out.length + " bytes, its header says " + uncompressedSize);
        }
        return out;
    }
}
