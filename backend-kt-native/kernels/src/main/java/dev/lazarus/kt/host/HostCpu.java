package dev.lazarus.kt.host;

import dev.lazarus.host.CpuInfo;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

/** What Linux says of this machine's CPU ({@code /proc/cpuinfo}), read once: its model name and its feature flags. */
public final class HostCpu {

    private static final CpuInfo CPUINFO = CpuInfo.parse(read());

    private HostCpu() {
    }

    /** The first processor's flags ({@code avx2}, {@code avx512_bf16}, {@code amx_int8}, ...); empty where unknown. */
    public static Set<String> flags() {
        return CPUINFO.flags();
    }

    /** The first processor's model name, or "unknown CPU". */
    public static String model() {
        return "unknown".equals(CPUINFO.model()) ? "unknown CPU" : CPUINFO.model();
    }

    /**
     * Physical cores as llama.cpp counts them for its default thread count ({@code cpu_get_num_physical_cores}): the
     * distinct {@code thread_siblings} masks of {@code /sys/devices/system/cpu/cpuN/topology}, N from 0 until one is
     * missing; where none can be read, the logical processors (halved above 4), as llama.cpp falls back.
     */
    public static int physicalCores() {
        Set<String> siblings = new java.util.HashSet<>();
        for (int cpu = 0; ; cpu++) {
            try {
                siblings.add(Files.readString(Path.of("/sys/devices/system/cpu/cpu" + cpu + "/topology/thread_siblings")).trim());
            } catch (IOException | SecurityException e) {
                break;
            }
        }
        int logical = Runtime.getRuntime().availableProcessors();
        return !siblings.isEmpty() ? siblings.size() : logical <= 4 ? logical : logical / 2;
    }

    private static List<String> read() {
        try {
            return Files.readAllLines(Path.of("/proc/cpuinfo"));
        } catch (IOException | SecurityException e) {
            return List.of();
        }
    }
}
