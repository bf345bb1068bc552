package dev.lazarus.kt.placement;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The host's memory as the RAM tier's default sees it: the machine's total (the container's limit where there is
 * one) and what is available for new allocations now, Linux's {@code MemAvailable} (free memory plus the page cache
 * that can be dropped, e.g. the mapped GGUF's own pages), at most the total; {@code getFreeMemorySize} elsewhere.
 */
record HostMemory(long total, long available) {

    static HostMemory now() {
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long total = os.getTotalMemorySize();
        long available = memAvailable(Path.of("/proc/meminfo"));
        return new HostMemory(total, Math.min(total, available < 0 ? os.getFreeMemorySize() : available));
    }

    /** {@code MemAvailable} in bytes, or -1 when the file or the line is missing. */
    static long memAvailable(Path meminfo) {
        try {
            for (String line : Files.readAllLines(meminfo)) {
                if (line.startsWith("MemAvailable:")) {
                    String[] parts = line.substring("MemAvailable:".length()).trim().split("\\s+");
                    return Long.parseLong(parts[0]) * 1024; // kB
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return -1;
    }
}
