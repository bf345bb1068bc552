package dev.lazarus.kt.host;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

/** What Linux says of this machine's CPU ({@code /proc/cpuinfo}), read once: its model name and its feature flags. */
public final class HostCpu {

    private static final List<String> CPUINFO = read();
    private static final Set<String> FLAGS = CPUINFO.stream().filter(l -> l.startsWith("flags")).findFirst()
            .map(l -> Set.of(l.substring(l.indexOf(':') + 1).trim().split("\\s+"))).orElse(Set.of());
    private static final String MODEL = CPUINFO.stream().filter(l -> l.startsWith("model name")).findFirst()
            .map(l -> l.substring(l.indexOf(':') + 1).trim()).orElse("unknown CPU");

    private HostCpu() {
    }

    /** The first processor's flags ({@code avx2}, {@code avx512_bf16}, {@code amx_int8}, ...); empty where unknown. */
    public static Set<String> flags() {
        return FLAGS;
    }

    /** The first processor's model name, or "unknown CPU". */
    public static String model() {
        return MODEL;
    }

    private static List<String> read() {
        try {
            return Files.readAllLines(Path.of("/proc/cpuinfo"));
        } catch (IOException | SecurityException e) {
            return List.of();
        }
    }
}
