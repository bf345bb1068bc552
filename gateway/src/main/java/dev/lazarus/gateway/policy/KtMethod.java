package dev.lazarus.gateway.policy;

import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * How a candidate runs its weights, and the CPU features that needs (the method matrix as operators found it
 * for KTransformers' {@code --kt-method}). Each method
 * lists alternatives: it runs when every flag of at least one alternative is present.
 */
public enum KtMethod {
    /** Nothing to check on this machine (a remote server, or a runtime with no CPU requirement). */
    NONE(List.of()),
    /** The in-JVM engine: what the Vector API maps to, AVX2 on x86 or NEON ({@code asimd}) on Arm. */
    KT_NATIVE(List.of(Set.of("avx2"), Set.of("asimd"))),
    /** GGUF through llamafile kernels: any x86 since Haswell, AMD Zen included. */
    LLAMAFILE(List.of(Set.of("avx2"))),
    RAWINT4(List.of(Set.of("avx512f"))),
    FP8(List.of(Set.of("avx512f", "avx512_bf16"))),
    FP8_PERCHANNEL(List.of(Set.of("avx512f", "avx512_bf16"))),
    /** Sapphire Rapids and later: AMX tiles plus AVX-512 with the BF16 extension. */
    BF16(List.of(Set.of("amx_tile", "amx_bf16", "avx512f", "avx512_bf16"))),
    AMXINT4(List.of(Set.of("amx_tile", "amx_int8"))),
    AMXINT8(List.of(Set.of("amx_tile", "amx_int8")));

    private final List<Set<String>> alternatives;

    KtMethod(List<Set<String>> alternatives) {
        this.alternatives = alternatives;
    }

    public List<Set<String>> alternatives() {
        return alternatives;
    }

    /**
     * The flags missing for the closest alternative (the one missing the fewest), sorted; empty
     * when the CPU can run this method.
     */
    public List<String> missingFlags(Set<String> cpuFlags) {
        List<String> best = null;
        for (Set<String> alternative : alternatives) {
            List<String> missing = alternative.stream().filter(f -> !cpuFlags.contains(f)).sorted().toList();
            if (best == null || missing.size() < best.size()) {
                best = missing;
            }
        }
        return best == null ? List.of() : best;
    }

    /** "avx2" or "avx2 or asimd" — what the method needs, for messages. */
    public String describeNeeds() {
        return alternatives.stream()
                .map(set -> set.stream().sorted().collect(Collectors.joining("+")))
                .collect(Collectors.joining(" or "));
    }
}
