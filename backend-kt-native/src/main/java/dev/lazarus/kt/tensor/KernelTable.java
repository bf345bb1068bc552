package dev.lazarus.kt.tensor;

import dev.lazarus.kt.gguf.GgmlType;

/**
 * The one selection table of the row kernels of a matrix on ggml's blocks. Each choice is the order llama-server's
 * CPU backend takes for such a matrix, so a kernel is chosen by three things:
 *
 * <ul>
 *   <li><b>the host</b>: the native kernels where they are selected ({@code -Dlazarus.kt.kernels}) and
 *       {@link NativeKernels#covering} takes the matrix; else the one Java kernel of the type in the same orders
 *       ({@link #java}), the portable path and the readable reference;</li>
 *   <li><b>the layout llama-server reads</b>: the types it repacks at load ({@code *_8x8}: Q4_0, Q4_K, Q2_K, IQ4_NL,
 *       MXFP4) are repacked only where the rows are a multiple of 8 and the matrix is not a slice of a 3-D weight;
 *       a repacked matrix rounds in the repacked GEMV's order (the Java kernels read ggml's blocks in place in it);</li>
 *   <li><b>the multiplication</b> ({@link Use}): a dense weight's batch takes the repacked GEMM's order for its
 *       fours; a routed expert (mul_mat_id) takes the one-vector path for every token; a batch of
 *       {@link TiledKQuantKernel#MIN_BATCH} or more on a K-quant that is not repacked takes the tiled matmul.</li>
 * </ul>
 *
 * {@link WeightMatrices} builds matrices from these choices; the copies it makes at load (the RAM tier's and the native
 * kernels' layouts) are its own {@code Copy} table.
 *
 * @param single the kernel of one vector (and of every vector where the other two are null)
 * @param group  the kernel of a batch's fours, where llama-server rounds them in its GEMM order; or null
 * @param tiled  the kernel of every vector of a batch of {@link TiledKQuantKernel#MIN_BATCH} or more; or null
 */
record KernelTable(RowKernel single, RowKernel group, RowKernel tiled) {

    /** Which of llama-server's multiplications a matrix stands for. */
    enum Use {
        /** mul_mat of a 2-D weight: a repacked type rounds a batch's fours in its GEMM order. */
        DENSE,
        /** mul_mat_id of a routed expert: every token of a batch through the one-vector path, no GEMM. */
        EXPERT,
        /** A slice of a 3-D weight multiplied with a plain batched mul_mat (deepseek2's attn_k_b): never repacked. */
        SLICE
    }

    private static final RowKernel Q2K_GEMV = new SubBlockKQuantKernel(GgmlType.Q2_K, SubBlockKQuantKernel.Order.REPACKED_GEMV);
    private static final RowKernel Q2K_GEMM = new SubBlockKQuantKernel(GgmlType.Q2_K, SubBlockKQuantKernel.Order.REPACKED_GEMM);

    /** A dense matrix: batches take llama-server's GEMM order in fours where it has one. */
    static KernelTable dense(GgmlType type, int rows, int cols) {
        return select(type, rows, cols, Use.DENSE);
    }

    /** A routed expert's matrix: every token of a batch through the one-vector path (no four-row GEMM). */
    static KernelTable expert(GgmlType type, int rows, int cols) {
        return select(type, rows, cols, Use.EXPERT);
    }

    /** A slice of a 3-D weight: ggml's vec_dot and tiled orders on ggml's blocks, in Java. */
    static KernelTable inPlace(GgmlType type) {
        return java(type, false, Use.SLICE);
    }

    /** The native kernels where they are selected and cover the matrix, else {@link #java}. */
    static KernelTable select(GgmlType type, int rows, int cols, Use use) {
        if (use != Use.SLICE && NativeKernels.selected()) {
            NativeRowKernel[] k = NativeKernels.covering(type, rows, cols, use == Use.DENSE);
            if (k != null) {
                return new KernelTable(k[0], k[1], k[2]);
            }
        }
        return java(type, use != Use.SLICE && rows % 8 == 0, use);
    }

    /**
     * The Java kernels of {@code type}: each (block layout × exact-integer stage × float fold), named in its class.
     *
     * @param repacked whether llama-server would repack such a matrix (rows a multiple of 8, not a slice): where it
     *                 repacks the type, the repacked orders
     */
    static KernelTable java(GgmlType type, boolean repacked, Use use) {
        boolean dense = use == Use.DENSE;
        return switch (type) {
            // ggml's vec_dot, bit for bit (GgmlFloatKernels, FloatKernels); no batch order of their own
            case F32 -> one(GgmlFloatKernels::f32);
            case F16 -> one(GgmlFloatKernels::f16);
            case BF16 -> one(FloatKernels.bf16Kernel());
            // ggml's lane orders (LegacyQuantKernels); Q8_0 is never repacked on AVX-512
            case Q8_0 -> one(Q8_0Kernel.INSTANCE);
            // q4_0_8x8: one accumulator per row in its GEMV and GEMM alike, so no group kernel
            case Q4_0 -> one(repacked ? Q4_0RepackedKernel.INSTANCE : LegacyVectorKernel.of(type));
            case Q4_1, Q5_0, Q5_1 -> one(LegacyVectorKernel.of(type));
            // q4_K_8x8: the repacked GEMV (and its GEMM for a dense batch's fours) on ggml's blocks in int16 products;
            // not repacked: vec_dot, and the tiled matmul from eight vectors
            case Q4_K -> repacked
                    ? new KernelTable(Q4KInt16InPlaceKernel.INSTANCE, dense ? Q4KInt16InPlaceKernel.GEMM : null, null)
                    : new KernelTable(Q45KKernel.Q4_K_IN_PLACE, null, TiledKQuantKernel.of(GgmlType.Q4_K));
            // never repacked on x86: vec_dot, and the tiled matmul from eight vectors
            case Q5_K -> new KernelTable(Q45KKernel.Q5_K, null, TiledKQuantKernel.of(GgmlType.Q5_K));
            case Q6_K -> new KernelTable(Q6KInt16Kernel.INSTANCE, null, Q6KInt16Kernel.TILED);
            // q2_K_8x8 on the AVX-512 variants: its GEMV (and GEMM for a dense batch's fours); else as Q3_K
            case Q2_K -> repacked ? new KernelTable(Q2K_GEMV, dense ? Q2K_GEMM : null, null) : subBlock(type);
            case Q3_K, IQ4_XS, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M -> subBlock(type);
            // iq4_nl_8x8, mxfp4_8x8: q4_0_8x8's one accumulator, GEMV and GEMM alike
            case IQ4_NL, MXFP4 -> one(new TableBlockKernel(type,
                    repacked ? TableBlockKernel.Order.REPACKED : TableBlockKernel.Order.VEC_DOT));
            default -> throw new IllegalArgumentException("no kernel for weight type " + type);
        };
    }

    /** One kernel for every vector of a batch. */
    private static KernelTable one(RowKernel kernel) {
        return new KernelTable(kernel, null, null);
    }

    /** The low-bit K-quant and grid layouts: vec_dot, and the tiled matmul from eight vectors. */
    private static KernelTable subBlock(GgmlType type) {
        return new KernelTable(new SubBlockKQuantKernel(type, SubBlockKQuantKernel.Order.VEC_DOT), null,
                new SubBlockKQuantKernel(type, SubBlockKQuantKernel.Order.TILED));
    }
}
