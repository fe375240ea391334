package qlab.pipeline.results;

import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.parquet.ParquetReadOptions;
import org.apache.parquet.avro.AvroReadSupport;
import org.apache.parquet.avro.AvroParquetWriter;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.column.page.PageReadStore;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.api.ReadSupport;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.ColumnIOFactory;
import org.apache.parquet.io.LocalInputFile;
import org.apache.parquet.io.LocalOutputFile;
import org.apache.parquet.io.MessageColumnIO;
import org.apache.parquet.io.OutputFile;
import org.apache.parquet.io.RecordReader;
import org.apache.parquet.io.api.RecordMaterializer;
import org.apache.parquet.schema.MessageType;
import qlab.engine.QlabException;

/**
 * Reading and writing result Parquet files outside the pipeline (the history view, the journal and
 * its recovery). Reads any set of files and directories; directories are searched recursively, but
 * hidden ones (the journal, Beam's temporary files) are not, since their rows are not final.
 */
public final class ResultFiles {

    private ResultFiles() {
    }

    /**
     * The directory of a results directory holding tables derived from its rows (the sensitivity
     * table): their Parquet files are not result files, and {@link #find} does not list them.
     */
    public static final String TABLES_DIR = "tables";

    /** Every result file under the given files and directories, sorted by path. */
    public static List<Path> find(List<Path> roots) {
        List<Path> files = new ArrayList<>();
        for (Path root : roots) {
            if (Files.isRegularFile(root)) {
                files.add(root);
            } else if (Files.isDirectory(root)) {
                try {
                    Files.walkFileTree(root, new SimpleFileVisitor<>() {
                        @Override
                        public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
                            return !dir.equals(root) && (hidden(dir) || dir.getFileName().toString().equals(TABLES_DIR))
                                    ? FileVisitResult.SKIP_SUBTREE
                                    : FileVisitResult.CONTINUE;
                        }

                        @Override
                        public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                            if (file.getFileName().toString().endsWith(".parquet") && !hidden(file)) {
                                files.add(file);
                            }
                            return FileVisitResult.CONTINUE;
                        }
                    });
                } catch (IOException e) {
                    throw new QlabException(root + ": cannot list: " + e.getMessage());
                }
            } else {
                throw new QlabException(root + ": no such file or directory");
            }
        }
        files.sort(Comparator.naturalOrder());
        return files;
    }

    /** All rows of all result files under {@code roots}. */
    public static List<ResultRow> readRows(List<Path> roots) {
        List<ResultRow> rows = new ArrayList<>();
        for (Path f : find(roots)) {
            for (GenericRecord r : readRecords(f)) {
                rows.add(ResultRow.from(r));
            }
        }
        return rows;
    }

    /**
     * The rows of one file, through Parquet's file reader and parquet-avro's record materializer
     * with a plain configuration: {@code AvroParquetReader}'s builder needs Hadoop's configuration
     * classes and their dependencies, which the runtime classpath does not carry.
     */
    public static List<GenericRecord> readRecords(Path file) {
        List<GenericRecord> records = new ArrayList<>();
        PlainParquetConfiguration conf = new PlainParquetConfiguration();
        ParquetReadOptions options = ParquetReadOptions.builder(conf).withCodecFactory(SnappyCodecs.INSTANCE).build();
        try (ParquetFileReader reader = ParquetFileReader.open(new LocalInputFile(file), options)) {
            MessageType schema = reader.getFileMetaData().getSchema();
            Map<String, String> metadata = reader.getFileMetaData().getKeyValueMetaData();
            AvroReadSupport<GenericRecord> support = new AvroReadSupport<>(GenericData.get());
            ReadSupport.ReadContext context = support.init(conf, metadata, schema);
            RecordMaterializer<GenericRecord> materializer = support.prepareForRead(conf, metadata, schema, context);
            MessageColumnIO columns = new ColumnIOFactory().getColumnIO(context.getRequestedSchema(), schema);
            for (PageReadStore group = reader.readNextRowGroup(); group != null; group = reader.readNextRowGroup()) {
                RecordReader<GenericRecord> rows = columns.getRecordReader(group, materializer);
                for (long i = 0; i < group.getRowCount(); i++) {
                    records.add(rows.read());
                }
            }
        } catch (IOException | RuntimeException e) {
            throw new QlabException(file + ": not a readable Parquet result file: " + firstLine(e));
        }
        return records;
    }

    /** The reader's reason in one line: Parquet and Jackson messages can span several (a JSON location). */
    private static String firstLine(Exception e) {
        String m = e.getMessage();
        if (m == null || m.isBlank()) {
            return e.getClass().getSimpleName();
        }
        return m.strip().lines().findFirst().orElse("").replaceAll("\\p{Cntrl}", "?");
    }

    /** Writes rows to {@code target} through a temporary file in the same directory, then renames it. */
    public static void writeAtomically(Path target, List<GenericRecord> records) throws IOException {
        writeAtomically(target, ResultSchema.CURRENT, records);
    }

    /** Writes records of {@code schema} (a derived table's) to {@code target}, through a temporary file. */
    public static void writeAtomically(Path target, Schema schema, List<GenericRecord> records) throws IOException {
        Files.createDirectories(target.toAbsolutePath().getParent());
        Path tmp = target.resolveSibling("." + target.getFileName() + ".tmp");
        Files.deleteIfExists(tmp);
        try (ParquetWriter<GenericRecord> writer = writer(new LocalOutputFile(tmp), schema)) {
            for (GenericRecord r : records) {
                writer.write(r);
            }
        }
        moveAtomically(tmp, target);
    }

    /**
     * A writer of result rows to {@code out}, the one configuration every result file is written
     * with (here and by the pipeline's sink). A plain Parquet configuration and
     * snappy-java for the pages: no Hadoop classes.
     */
    public static ParquetWriter<GenericRecord> writer(OutputFile out, Schema schema) throws IOException {
        return AvroParquetWriter.<GenericRecord>builder(out)
                .withConf(new PlainParquetConfiguration())
                .withSchema(schema)
                .withDataModel(GenericData.get())
                .withCompressionCodec(CompressionCodecName.SNAPPY)
                .withCodecFactory(SnappyCodecs.INSTANCE)
                .build();
    }

    static void moveAtomically(Path from, Path to) throws IOException {
        try {
            Files.move(from, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(from, to, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    private static boolean hidden(Path p) {
        String name = p.getFileName().toString();
        return name.startsWith(".") || name.startsWith("_");
    }
}
