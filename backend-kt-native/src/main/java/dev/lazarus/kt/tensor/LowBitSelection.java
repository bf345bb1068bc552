package dev.lazarus.kt.tensor;

import dev.lazarus.kt.gguf.GgmlType;

/**
 * {@link NativeKernels#covering}'s rows for Q2_K, Q3_K, IQ4_XS, IQ4_NL, MXFP4 and the grid I-quants (IQ2_XXS, IQ2_XS,
 * IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M: vec_dot, and the tiled order for batches): the native kernels of the orders
 * {@link WeightMatrices} gives the Java kernels ({@link SubBlockKQuantKernel}, {@link TableBlockKernel}), i.e.
 * llama-server's: Q2_K with rows a multiple of 8 repacked (its GEMV, and its GEMM for fours of a dense matrix's
 * batch), IQ4_NL and MXFP4 with rows a multiple of 8 repacked (one accumulator, no GEMM of their own), anything else
 * ggml's vec_dot, with the tiled order for batches of {@link TiledKQuantKernel#MIN_BATCH} on the K-quant layouts.
 * Always native where the library loads: the Java kernels of these types are scalar reference loops.
 */
final class LowBitSelection {

    private LowBitSelection() {
    }

    static NativeRowKernel[] covering(GgmlType type, int rows, boolean withGemm) {
        boolean repacked = rows % 8 == 0;
        return switch (type) {
            case Q2_K -> repacked
                    ? of(NativeKernels.Kernel.Q2K_GEMV, withGemm ? NativeKernels.Kernel.Q2K_GEMM : null, null)
                    : of(NativeKernels.Kernel.Q2K, null, NativeKernels.Kernel.Q2K_TILED);
            case Q3_K -> of(NativeKernels.Kernel.Q3K, null, NativeKernels.Kernel.Q3K_TILED);
            case IQ4_XS -> of(NativeKernels.Kernel.IQ4XS, null, NativeKernels.Kernel.IQ4XS_TILED);
            case IQ4_NL -> of(repacked ? NativeKernels.Kernel.IQ4NL_REPACKED : NativeKernels.Kernel.IQ4NL, null, null);
            case MXFP4 -> of(repacked ? NativeKernels.Kernel.MXFP4_REPACKED : NativeKernels.Kernel.MXFP4, null, null);
            case IQ2_XXS -> of(NativeKernels.Kernel.IQ2XXS, null, NativeKernels.Kernel.IQ2XXS_TILED);
            case IQ2_XS -> of(NativeKernels.Kernel.IQ2XS, null, NativeKernels.Kernel.IQ2XS_TILED);
            case IQ2_S -> of(NativeKernels.Kernel.IQ2S, null, NativeKernels.Kernel.IQ2S_TILED);
            case IQ3_XXS -> of(NativeKernels.Kernel.IQ3XXS, null, NativeKernels.Kernel.IQ3XXS_TILED);
            case IQ3_S -> of(NativeKernels.Kernel.IQ3S, null, NativeKernels.Kernel.IQ3S_TILED);
            case IQ1_S -> of(NativeKernels.Kernel.IQ1S, null, NativeKernels.Kernel.IQ1S_TILED);
            case IQ1_M -> of(NativeKernels.Kernel.IQ1M, null, NativeKernels.Kernel.IQ1M_TILED);
            default -> throw new IllegalArgumentException("not a low-bit type: " + type);
        };
    }

    private static NativeRowKernel[] of(NativeKernels.Kernel single, NativeKernels.Kernel group, NativeKernels.Kernel tiled) {
        return new NativeRowKernel[] {NativeKernels.kernel(single), group == null ? null : NativeKernels.kernel(group),
                tiled == null ? null : NativeKernels.kernel(tiled)};
    }
}
