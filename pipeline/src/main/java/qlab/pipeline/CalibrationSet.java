package qlab.pipeline;

import java.io.Serializable;
import java.util.List;

/**
 * A named set of text files from which an importance matrix is computed.
 *
 * @param name        the name given in the sweep file (it is the value of the {@code imatrix} column)
 * @param files       absolute paths of the text files
 * @param contentHash hash of the files' contents: the importance matrix depends on it, not on the paths
 */
public record CalibrationSet(String name, List<String> files, String contentHash) implements Serializable {
    public CalibrationSet {
        files = List.copyOf(files);
    }
}
