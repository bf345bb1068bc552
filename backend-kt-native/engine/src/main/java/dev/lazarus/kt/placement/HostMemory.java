package dev.lazarus.kt.placement;

import dev.lazarus.host.MemInfo;
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
        Path meminfo = Path.of("/proc/meminfo");
        long total, free;
        try {
            var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
            total = os.getTotalMemorySize();
            free = os.getFreeMemorySize();
        } catch (LinkageError e) { // a runtime without the jdk.management module (a jlinked one)
            total = meminfo(meminfo, "MemTotal:");
            free = -1;
        }
        long available = meminfo(meminfo, "MemAvailable:");
        available = available >= 0 ? available : free >= 0 ? free : 0;
        return new HostMemory(total, total > 0 ? Math.min(total, available) : available);
    }

    /** {@code MemAvailable} in bytes, or -1 when the file or the line is missing. */
    static long memAvailable(Path meminfo) {
        return meminfo(meminfo, "MemAvailable:");
    }

    /** A line of {@code /proc/meminfo} in bytes, or -1 when the file or the line is missing. */
    private static long meminfo(Path meminfo, String key) {
        try {
            return MemInfo.bytes(Files.readAllLines(meminfo), key.substring(0, key.length() - 1)).orElse(-1);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }
}
