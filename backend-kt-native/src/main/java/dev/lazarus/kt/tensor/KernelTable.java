package dev.lazarus.kt.tensor;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.gguf.GridQuants;
import dev.lazarus.kt.gguf.SubBlockQuants;
import dev.lazarus.kt.gguf.TableQuants;

/**
 * The one selection table of the row kernels of a matrix on ggml's blocks: the native kernels where they are selected
 * and cover it ({@link NativeKernels#covering}, {@code -Dlazarus.kt.kernels}), else the one Java kernel of the type
 * in the same orders (the portable path and the readable reference). Each choice is the order llama-server's CPU
 * backend takes for such a matrix: its vec_dot, its repacked GEMV/GEMM where it repacks the matrix at load (rows a
 * multiple of 8), its tiled matmul for batches of {@link TiledKQuantKernel#MIN_BATCH} on the K-quants it does not
 * repack. {@link WeightMatrices} builds matrices from these choices.
 *
 * @param single the kernel of one vector (and of every vector where the other two are null)
 * @param group  the kernel of a batch's fours, where llama-server rounds them in its GEMM order; or null
 * @param tiled  the kernel of every vector of a batch of {@link TiledKQuantKernel#MIN_BATCH} or more; or null
 */
record KernelTable(RowKernel single, RowKernel group, RowKernel tiled) {

    private static final RowKernel Q2K_GEMV = new SubBlockKQuantKernel(GgmlType.Q2_K, SubBlockKQuantKernel.Order.REPACKED_GEMV);
    private static final RowKernel Q2K_GEMM = new SubBlockKQuantKernel(GgmlType.Q2_K, SubBlockKQuantKernel.Order.REPACKED_GEMM);

    /** A dense matrix: batches take llama-server's GEMM order in fours where it has one. */
    static KernelTable dense(GgmlType type, int rows, int cols) {
        KernelTable nativeKernels = nativeKernels(type, rows, cols, true);
        return nativeKernels != null ? nativeKernels : javaDense(type, rows);
    }

    /**
     * A routed expert's matrix: llama-server multiplies experts with mul_mat_id, which takes the single-vector path
     * for every token of a batch (no four-row GEMM for repacked types).
     */
    static KernelTable expert(GgmlType type, int rows, int cols) {
        KernelTable nativeKernels = nativeKernels(type, rows, cols, false);
        if (nativeKernels != null) {
            return nativeKernels;
        }
        if (type == GgmlType.Q4_K && rows % 8 == 0) {
            return new KernelTable(Q4KInt16InPlaceKernel.INSTANCE, null, null);
        }
        if (repacksQ2K(type, rows)) {
            return new KernelTable(Q2K_GEMV, null, null);
        }
        return dense(type, rows, cols);
    }

    /**
     * A matrix that llama-server never repacks (a slice of a 3-D weight it multiplies with a plain batched mul_mat):
     * the Java vec_dot and tiled orders on ggml's blocks.
     */
    static KernelTable inPlace(GgmlType type) {
        return new KernelTable(vecDot(type), null, tiled(type));
    }

    private static KernelTable nativeKernels(GgmlType type, int rows, int cols, boolean withGemm) {
        if (!NativeKernels.selected()) {
            return null;
        }
        NativeRowKernel[] k = NativeKernels.covering(type, rows, cols, withGemm);
        return k == null ? null : new KernelTable(k[0], k[1], k[2]);
    }

    private static KernelTable javaDense(GgmlType type, int rows) {
        if (type == GgmlType.Q4_K && rows % 8 == 0) {
            // llama-server repacks these and rounds per row in its own orders (see GgmlKQuantKernels)
            return new KernelTable(Q4KInt16InPlaceKernel.INSTANCE, Q4KInt16InPlaceKernel.GEMM, null);
        }
        if (type == GgmlType.Q4_0 && rows % 8 == 0) {
            // repacked by llama-server too (q4_0_8x8), one accumulator per row in its GEMV and GEMM alike
            return new KernelTable(Q4_0RepackedKernel.INSTANCE, null, null);
        }
        if (repacksQ2K(type, rows)) {
            return new KernelTable(Q2K_GEMV, Q2K_GEMM, null);
        }
        if (TableQuants.covers(type) && rows % 8 == 0) {
            // repacked by llama-server (iq4_nl_8x8, mxfp4_8x8): q4_0_8x8's one accumulator, GEMV and GEMM alike
            return new KernelTable(new TableBlockKernel(type, TableBlockKernel.Order.REPACKED), null, null);
        }
        return inPlace(type);
    }

    /** Q2_K that llama-server's AVX-512 variants repack at load ({@code q2_K_8x8_q8_K}): rows a multiple of 8. */
    private static boolean repacksQ2K(GgmlType type, int rows) {
        return type == GgmlType.Q2_K && rows % 8 == 0;
    }

    /** ggml's vec_dot order of {@code type}, bit for bit. */
    private static RowKernel vecDot(GgmlType type) {
        return switch (type) {
            // ggml's vec_dot order, bit for bit (see GgmlFloatKernels, FloatKernels)
            case F32 -> GgmlFloatKernels::f32;
            case F16 -> GgmlFloatKernels::f16;
            case BF16 -> FloatKernels.bf16Kernel();
            // ggml's lane orders, bit for bit: a faster vector form must keep them (see LegacyQuantKernels, GgmlKQuantKernels)
            case Q8_0 -> Q8_0Kernel.INSTANCE;
            case Q4_0, Q4_1, Q5_0, Q5_1 -> LegacyVectorKernel.of(type); // Q4_0: only where llama-server does not repack
            case Q4_K -> Q45KKernel.Q4_K_IN_PLACE; // a matrix llama-server does not repack (rows not a multiple of 8)
            case Q5_K -> Q45KKernel.Q5_K;
            case Q6_K -> Q6KInt16Kernel.INSTANCE;
            case Q2_K, Q3_K, IQ4_XS -> new SubBlockKQuantKernel(type, SubBlockKQuantKernel.Order.VEC_DOT); // Q2_K: rows not a multiple of 8
            case IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M -> new SubBlockKQuantKernel(type, SubBlockKQuantKernel.Order.VEC_DOT);
            case IQ4_NL, MXFP4 -> new TableBlockKernel(type, TableBlockKernel.Order.VEC_DOT); // rows not a multiple of 8
            default -> throw new IllegalArgumentException("no kernel for weight type " + type);
        };
    }

    /**
     * llama-server's tiled order for batches of {@link TiledKQuantKernel#MIN_BATCH} on a K-quant matrix it does not
     * repack (Q6_K in int16 products); null for other types.
     */
    private static RowKernel tiled(GgmlType type) {
        if (SubBlockQuants.covers(type) || GridQuants.covers(type)) {
            return new SubBlockKQuantKernel(type, SubBlockKQuantKernel.Order.TILED);
        }
        return type == GgmlType.Q6_K ? Q6KInt16Kernel.TILED : TiledKQuantKernel.of(type);
    }
}
