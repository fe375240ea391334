package qlab.pipeline.results;

import java.io.IOException;
import java.io.Serializable;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;

/**
 * What every row of one sweep run shares.
 *
 * @param runId       UTC start time plus a random suffix, e.g. {@code 20261130T053200Z-3fa1}; sorts by time
 * @param codeVersion git commit of the qlab checkout the code runs from, {@code -dirty} if it had changes outside
 *                    {@code results/} and {@code models/}
 */
public record RunInfo(String runId, String codeVersion) implements Serializable {

    private static final DateTimeFormatter RUN_TIME =
            DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);

    public static RunInfo start() {
        byte[] suffix = new byte[2];
        new SecureRandom().nextBytes(suffix);
        return new RunInfo(RUN_TIME.format(Instant.now()) + "-" + HexFormat.of().formatHex(suffix), currentCodeVersion());
    }

    /** The commit of the checkout this class was loaded from, or "unknown" outside a git checkout. */
    public static String currentCodeVersion() {
        Path dir;
        try {
            dir = Path.of(RunInfo.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException | RuntimeException e) {
            return "unknown";
        }
        while (dir != null && !Files.exists(dir.resolve(".git"))) {
            dir = dir.getParent();
        }
        return dir == null ? "unknown" : codeVersion(dir);
    }

    /** The commit of the git checkout at {@code dir}, {@code -dirty} with changes outside results/ and models/. */
    static String codeVersion(Path dir) {
        String commit = git(dir, "rev-parse", "HEAD");
        if (commit == null || commit.isEmpty()) {
            return "unknown";
        }
        // Results and models are what a run writes (a fresh run of configs/perf.yaml first empties the
        // committed results/perf): changes there say nothing about the code.
        String status = git(dir, "status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)results", ":(exclude)models");
        return status == null || status.isEmpty() ? commit : commit + "-dirty";
    }

    private static String git(Path dir, String... args) {
        String[] cmd = new String[args.length + 3];
        cmd[0] = "git";
        cmd[1] = "-C";
        cmd[2] = dir.toString();
        System.arraycopy(args, 0, cmd, 3, args.length);
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(false).start();
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroy();
                return null;
            }
            return out;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }
}
