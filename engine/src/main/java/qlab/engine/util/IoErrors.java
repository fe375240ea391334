package qlab.engine.util;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;

/**
 * The reason an I/O operation failed, as a user reads it. The JDK's file system exceptions carry
 * the reason in their type ({@code AccessDeniedException}'s message is only the path), so a message
 * built from {@code getMessage()} would repeat the path and omit why.
 */
public final class IoErrors {

    private IoErrors() {
    }

    public static String why(IOException e) {
        String reason = e instanceof FileSystemException fs && fs.getReason() != null ? fs.getReason() : switch (e) {
            case AccessDeniedException x -> "permission denied";
            case NoSuchFileException x -> "no such file or directory";
            case FileAlreadyExistsException x -> "already exists";
            case NotDirectoryException x -> "not a directory";
            case FileSystemException x -> x.getClass().getSimpleName();
            default -> e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        };
        if (e instanceof FileSystemException fs && fs.getFile() != null) {
            return reason + " (" + fs.getFile() + (fs.getOtherFile() == null ? "" : ", " + fs.getOtherFile()) + ")";
        }
        return reason;
    }
}
