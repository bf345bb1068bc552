package dev.lazarus.kt.tensor;

import dev.lazarus.kt.host.HostCpu;
import java.util.Locale;
import java.util.Set;

/**
 * Which of llama.cpp's x86 CPU variants the engine rounds like, where they differ. ggml builds one library per
 * instruction-set level and loads the best the host runs; the AVX-512 variants share every summation order the
 * engine reproduces except the BF16 dot product, which takes {@code vdpbf16ps} where the CPU has AVX512_BF16 (zen4,
 * cooperlake, sapphirerapids) and 16-lane f32 multiply-adds where it does not (skylakex, cascadelake, icelake,
 * cannonlake). Chosen from the host's CPU flags, as ggml chooses, or named by a backend's {@code ggml-variant} setting
 * ({@link KernelConfig}; for instance {@code zen4} on an Ice Lake machine, to reproduce what an AMD host computes). The AVX2 variants
 * (haswell, alderlake) sum 8 lanes: the engine has no such orders and keeps the AVX-512 ones there (docs/fidelity.md).
 */
public enum GgmlOrders {
    /** AVX-512 with AVX512_BF16: ggml's zen4, cooperlake and (outside its AMX buffers) sapphirerapids variants. */
    AVX512_BF16,
    /** AVX-512 without AVX512_BF16: ggml's skylakex, cascadelake, icelake and cannonlake variants. */
    AVX512;

    /** A variant's orders: {@code zen4}, {@code skylakex}, ... */
    public static GgmlOrders forVariant(String variant) {
        return switch (variant.trim().toLowerCase(Locale.ROOT)) {
            case "zen4", "cooperlake", "sapphirerapids" -> AVX512_BF16;
            case "skylakex", "cascadelake", "icelake", "cannonlake" -> AVX512;
            // no AVX2 orders: the AVX-512 ones, as on a host without a setting
            case "haswell", "alderlake" -> AVX512_BF16;
            default -> throw new IllegalArgumentException("unknown ggml CPU variant '" + variant
                    + "' (zen4, cooperlake, sapphirerapids, skylakex, cascadelake, icelake, cannonlake, haswell, alderlake)");
        };
    }

    /** The host's: AVX512_BF16 orders where the CPU has the instructions (or none of AVX-512), AVX512 otherwise. */
    public static GgmlOrders forHost() {
        Set<String> flags = HostCpu.flags();
        return flags.contains("avx512f") && !flags.contains("avx512_bf16") ? AVX512 : AVX512_BF16;
    }
}
