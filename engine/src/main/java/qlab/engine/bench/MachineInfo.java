package qlab.engine.bench;

import java.io.IOException;
import java.io.Serializable;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import qlab.engine.tensor.VectorSupport;

/** The machine a measurement ran on, recorded next to every figure (and in every sweep row). */
public record MachineInfo(String host, String cpu, int cores, String jdk, int vectorBits) implements Serializable {

    private static volatile MachineInfo current;

    /** This JVM's machine (computed once: none of it changes while the process runs). */
    public static MachineInfo current() {
        MachineInfo m = current;
        if (m == null) {
            m = new MachineInfo(hostName(), cpuModel(), Runtime.getRuntime().availableProcessors(),
                    System.getProperty("java.runtime.version", Runtime.version().toString()) + " ("
                            + System.getProperty("java.vm.vendor", "?") + ")",
                    VectorSupport.bits());
            current = m;
        }
        return m;
    }

    private static String cpuModel() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name")) {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux: fall through
        }
        return System.getProperty("os.arch", "unknown");
    }

    private static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            String env = System.getenv("HOSTNAME");
            return env != null ? env : "unknown";
        }
    }

    /** Peak resident set size of this process in bytes (VmHWM), or -1 where /proc is absent. */
    public static long peakRssBytes() {
        return procBytes("/proc/self/status", "VmHWM:");
    }

    /**
     * Bytes of this process's anonymous memory on 2 MiB pages (AnonHugePages in
     * /proc/self/smaps_rollup), or -1 where that is not reported: whether the weights got the huge
     * pages they ask for ({@link qlab.engine.util.HugePages}).
     */
    public static long hugePageBytes() {
        return procBytes("/proc/self/smaps_rollup", "AnonHugePages:");
    }

    /** The "key: N kB" line of a /proc file, in bytes; -1 where the file or line is missing (not Linux, an older kernel). */
    private static long procBytes(String file, String key) {
        try {
            for (String line : Files.readAllLines(Path.of(file))) {
                if (line.startsWith(key)) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            // not there
        }
        return -1;
    }

    /** The 1-minute load average from /proc/loadavg, or null where there is none (not Linux). */
    public static Double loadAverage() {
        try {
            return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+")[0]);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
