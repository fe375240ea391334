package qlab.pipeline;

import java.io.Serializable;

/**
 * A quantized model on disk.
 *
 * @param path          the checkpoint file or directory
 * @param fileBytes     its size on disk
 * @param bitsPerWeight quantized weight bits divided by the number of weights (scales included)
 */
public record QuantizedCheckpoint(String path, long fileBytes, double bitsPerWeight) implements Serializable {
}
