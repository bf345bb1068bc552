package dev.lazarus.gateway.policy.preflight;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import java.util.Set;

/**
 * What the machine has, as the probe read it.
 *
 * @param cpuVendor   {@code GenuineIntel}, {@code AuthenticAMD}, or an Arm implementer; "unknown" if unread
 * @param cpuModel    the model name line
 * @param flags       the CPU feature flags, lower case ({@code avx2}, {@code amx_tile}, {@code asimd} ...)
 * @param logicalCpus processors listed in /proc/cpuinfo
 * @param numaNodes   NUMA nodes (1 when the kernel does not say)
 * @param ramBytes    MemTotal
 * @param gpus        GPUs nvidia-smi listed; empty without one
 * @param notes       what could not be read, so that a reader knows a zero is "unknown"
 */
public record HardwareProfile(String cpuVendor, String cpuModel, Set<String> flags, int logicalCpus, int numaNodes,
                              long ramBytes, List<Gpu> gpus, List<String> notes) {

    /** The subset of flags the method matrix cares about, for display. */
    public static final List<String> POLICY_FLAGS = List.of("avx2", "avx512f", "avx512_bf16", "avx512_vnni",
            "amx_tile", "amx_int8", "amx_bf16", "asimd");

    public HardwareProfile {
        flags = Set.copyOf(flags);
        gpus = List.copyOf(gpus);
        notes = List.copyOf(notes);
    }

    /** @param memoryBytes the GPU's total memory */
    public record Gpu(String name, @JsonProperty("memory_bytes") long memoryBytes) {}

    public long vramBytes() {
        return gpus.stream().mapToLong(Gpu::memoryBytes).sum();
    }

    public boolean has(String flag) {
        return flags.contains(flag);
    }

    /** The policy-relevant flags this CPU has, in matrix order. */
    public List<String> policyFlags() {
        return POLICY_FLAGS.stream().filter(flags::contains).toList();
    }
}
