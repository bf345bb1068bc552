package dev.lazarus.kt.testsupport;

import dev.lazarus.kt.host.HostCpu;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * The x86-64 CPU variants of Debian's ggml ({@code libggml-cpu-<name>.so} in the chroot's
 * {@code ggml/backends0/}), each with the {@code /proc/cpuinfo} flags it needs. ggml loads the best-scoring
 * variant the host can run, and the variants do not compute alike: {@code sapphirerapids} alone puts weights in
 * AMX buffers, the AVX2 variants sum 8 lanes where the AVX-512 ones sum 16. The tests therefore hold llama-server
 * to one variant ({@code scripts/llama-server-chroot.sh --cpu-variant}) chosen from what the host is: see
 * {@link #reference()}.
 */
public enum GgmlCpuVariant {
    X64(),
    SSE42("sse4_2"),
    SANDYBRIDGE("sse4_2", "avx"),
    HASWELL("sse4_2", "avx", "f16c", "fma", "avx2", "bmi2"),
    ALDERLAKE("sse4_2", "avx", "f16c", "fma", "avx2", "bmi2", "avx_vnni"),
    SKYLAKEX("sse4_2", "avx", "f16c", "fma", "avx2", "bmi2", "avx512f", "avx512cd", "avx512vl", "avx512dq", "avx512bw"),
    CASCADELAKE("sse4_2", "avx", "f16c", "fma", "avx2", "bmi2", "avx512f", "avx512cd", "avx512vl", "avx512dq", "avx512bw",
            "avx512_vnni"),
    ICELAKE("sse4_2", "avx", "f16c", "fma", "avx2", "bmi2", "avx512f", "avx512cd", "avx512vl", "avx512dq", "avx512bw",
            "avx512vbmi", "avx512_vnni"),
    COOPERLAKE("sse4_2", "avx", "f16c", "fma", "avx2", "bmi2", "avx512f", "avx512cd", "avx512vl", "avx512dq", "avx512bw",
            "avx512_vnni", "avx512_bf16"),
    ZEN4("sse4_2", "avx", "f16c", "fma", "avx2", "bmi2", "avx512f", "avx512cd", "avx512vl", "avx512dq", "avx512bw",
            "avx512vbmi", "avx512_vnni", "avx512_bf16"),
    SAPPHIRERAPIDS("sse4_2", "avx", "f16c", "fma", "avx2", "bmi2", "avx512f", "avx512cd", "avx512vl", "avx512dq", "avx512bw",
            "avx512vbmi", "avx512_vnni", "avx512_bf16", "amx_tile", "amx_int8", "amx_bf16");

    /** Environment variable and system property that pin the reference variant (overriding {@link #reference()}). */
    public static final String ENV = "LAZARUS_GGML_CPU_VARIANT";
    public static final String PROPERTY = "lazarus.ggml.cpu-variant";

    /** The reference, best first: the first one the host runs. zen4 first: kt-native computes its orders. */
    private static final List<GgmlCpuVariant> PREFERENCE = List.of(ZEN4, COOPERLAKE, ICELAKE, CASCADELAKE, SKYLAKEX,
            ALDERLAKE, HASWELL);

    private static final Set<String> HOST_FLAGS = HostCpu.flags();

    private final Set<String> needs;

    GgmlCpuVariant(String... needs) {
        this.needs = Set.of(needs);
    }

    /** The library's name part ({@code zen4}), as {@code --cpu-variant} takes it. */
    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Whether this host has every instruction set the variant was built for. */
    public boolean runsOnHost() {
        return HOST_FLAGS.containsAll(needs);
    }

    /** Whether the variant routes weight products through AMX tiles (its own arithmetic, see docs/fidelity.md). */
    public boolean usesAmx() {
        return needs.contains("amx_int8");
    }

    /**
     * The variant llama-server is held to in the tests on this host: {@value #ENV} or {@code -D}{@value #PROPERTY}
     * when set, else the first of zen4, cooperlake, icelake, cascadelake, skylakex, alderlake, haswell the host runs.
     * Never {@code sapphirerapids} by default: its AMX arithmetic cannot be reproduced off AMX (a contract of its own,
     * tested separately). Throws on a host below AVX2, which kt-native does not support.
     */
    public static GgmlCpuVariant reference() {
        Optional<GgmlCpuVariant> pinned = pinned();
        if (pinned.isPresent()) {
            return pinned.get();
        }
        return PREFERENCE.stream().filter(GgmlCpuVariant::runsOnHost).findFirst()
                .orElseThrow(() -> new IllegalStateException("no AVX2 or AVX-512 ggml variant runs on this host: " + hostSummary()));
    }

    /** The variant pinned by environment or system property, if any. */
    public static Optional<GgmlCpuVariant> pinned() {
        String v = System.getProperty(PROPERTY, System.getenv(ENV));
        if (v == null || v.isBlank()) {
            return Optional.empty();
        }
        return Optional.of(of(v));
    }

    public static GgmlCpuVariant of(String id) {
        try {
            return valueOf(id.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("unknown ggml CPU variant '" + id + "' (one of "
                    + Arrays.stream(values()).map(GgmlCpuVariant::id).collect(Collectors.joining(", ")) + ")");
        }
    }

    /** The host's CPU model and the SIMD flags that decide the variant, for failure messages. */
    public static String hostSummary() {
        Set<String> relevant = new TreeSet<>();
        for (GgmlCpuVariant v : values()) {
            relevant.addAll(v.needs);
        }
        relevant.retainAll(HOST_FLAGS);
        return HostCpu.model() + " [" + String.join(" ", relevant) + "]";
    }
}
