package qlab.pipeline.results;

import java.io.IOException;
import java.io.Serializable;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import jdk.incubator.vector.FloatVector;

/** The machine a measurement ran on, as the result row records it. */
public record MachineInfo(String host, String cpu, int cores, String jdk, int vectorBits) implements Serializable {

    private static volatile MachineInfo current;

    /** This JVM's machine (computed once: none of it changes while the process runs). */
    public static MachineInfo current() {
        MachineInfo m = current;
        if (m == null) {
            m = new MachineInfo(hostName(), cpuName(), Runtime.getRuntime().availableProcessors(),
                    System.getProperty("java.runtime.version", Runtime.version().toString()), preferredVectorBits());
            current = m;
        }
        return m;
    }

    /** The 1-minute load average from /proc/loadavg, or null where there is none (not Linux). */
    public static Double loadAverage() {
        try {
            String text = Files.readString(Path.of("/proc/loadavg")).trim();
            return Double.parseDouble(text.split("\\s+")[0]);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private static String hostName() {
        String env = System.getenv("HOSTNAME");
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return env != null ? env : "unknown";
        }
    }

    private static String cpuName() {
        try {
            List<String> lines = Files.readAllLines(Path.of("/proc/cpuinfo"));
            for (String line : lines) {
                if (line.startsWith("model name")) {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux: fall through to the architecture
        }
        return System.getProperty("os.arch", "unknown");
    }

    /** 0 when the JVM runs without {@code --add-modules jdk.incubator.vector}. */
    private static int preferredVectorBits() {
        try {
            return FloatVector.SPECIES_PREFERRED.vectorBitSize();
        } catch (LinkageError e) {
            return 0;
        }
    }
}
