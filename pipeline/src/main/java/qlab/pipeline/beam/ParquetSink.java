package qlab.pipeline.beam;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.WritableByteChannel;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;
import org.apache.beam.sdk.io.FileIO;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.io.OutputFile;
import org.apache.parquet.io.PositionOutputStream;
import qlab.pipeline.results.ResultFiles;

/**
 * Avro records to a Parquet file through the channel {@link FileIO} opens: parquet-avro's writer
 * with {@link ResultFiles#writer}'s configuration. It stands in for Beam's ParquetIO, which is not
 * served at the Beam version of the Flink runner and needs all of Hadoop on the classpath. FileIO
 * writes each shard to a
 * temporary file and renames it when the bundle is committed, so a result file appears whole or
 * not at all.
 */
public final class ParquetSink implements FileIO.Sink<GenericRecord> {

    /** The schema as JSON: Avro's {@code Schema} is not serializable on every Avro version. */
    private final String schemaJson;
    private transient ParquetWriter<GenericRecord> writer;

    public ParquetSink(Schema schema) {
        this.schemaJson = schema.toString();
    }

    @Override
    public void open(WritableByteChannel channel) throws IOException {
        writer = ResultFiles.writer(new ChannelOutputFile(Channels.newOutputStream(channel)),
                new Schema.Parser().parse(schemaJson));
    }

    @Override
    public void write(GenericRecord element) throws IOException {
        writer.write(element);
    }

    /** Writes the footer. Closing the writer closes the channel, which FileIO tolerates (it closes it again). */
    @Override
    public void flush() throws IOException {
        writer.close();
    }

    /** A write-once Parquet output over a stream, counting the bytes written (Parquet's footer needs offsets). */
    private record ChannelOutputFile(OutputStream out) implements OutputFile {
        @Override
        public PositionOutputStream create(long blockSizeHint) {
            return new PositionOutputStream() {
                private long pos;

                @Override
                public long getPos() {
                    return pos;
                }

                @Override
                public void write(int b) throws IOException {
                    out.write(b);
                    pos++;
                }

                @Override
                public void write(byte[] b, int off, int len) throws IOException {
                    out.write(b, off, len);
                    pos += len;
                }

                @Override
                public void flush() throws IOException {
                    out.flush();
                }

                @Override
                public void close() throws IOException {
                    out.close();
                }
            };
        }

        @Override
        public PositionOutputStream createOrOverwrite(long blockSizeHint) {
            return create(blockSizeHint);
        }

        @Override
        public boolean supportsBlockSize() {
            return false;
        }

        @Override
        public long defaultBlockSize() {
            return 0;
        }
    }
}
