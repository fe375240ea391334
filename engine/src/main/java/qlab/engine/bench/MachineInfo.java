package qlab.engine.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import qlab.engine.tensor.VectorSupport;

/** Facts about the machine a measurement ran on, recorded next to every figure. */
public record MachineInfo(String cpu, int cores, String jdk, int vectorBits, String host) {

    public static MachineInfo current() {
        return new MachineInfo(cpuModel(), Runtime.getRuntime().availableProcessors(),
                Runtime.version().toString() + " (" + System.getProperty("java.vm.vendor", "?") + ")",
                VectorSupport.bits(), hostName());
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
        return System.getProperty("os.arch");
    }

    private static String hostName() {
        try {
            return java.net.InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return "unknown";
        }
    }

    /** Peak resident set size of this process in bytes (VmHWM), or -1 where /proc is absent. */
    public static long peakRssBytes() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmHWM:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux
        }
        return -1;
    }

    /** The 1-minute load average, or -1 where unavailable. */
    public static double loadAverage() {
        return java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    }
}
