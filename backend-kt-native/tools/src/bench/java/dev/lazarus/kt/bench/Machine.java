package dev.lazarus.kt.bench;

import dev.lazarus.kt.host.HostCpu;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** What the benchmark ran on, from /proc (Linux). */
final class Machine {

    private Machine() {
    }

    static String describe() {
        String model = HostCpu.model();
        String mem = lines("/proc/meminfo").stream().filter(l -> l.startsWith("MemTotal"))
                .map(l -> l.replaceAll("\\D+", "")).findFirst().map(kb -> Long.parseLong(kb) / (1 << 20) + " GiB RAM")
                .orElse("unknown RAM");
        return model + ", " + Runtime.getRuntime().availableProcessors() + " cores, " + mem;
    }

    /** The 1, 5 and 15 minute load averages. */
    static String loadAverage() {
        List<String> l = lines("/proc/loadavg");
        if (l.isEmpty()) {
            return "unknown";
        }
        String[] f = l.getFirst().split(" ");
        return f[0] + " " + f[1] + " " + f[2];
    }

    private static List<String> lines(String path) {
        try {
            return Files.readAllLines(Path.of(path));
        } catch (IOException e) {
            return List.of();
        }
    }
}
