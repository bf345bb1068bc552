package dev.lazarus.kt.matrix;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.quant.floats.FloatKernels;
import dev.lazarus.kt.quant.floats.GgmlFloatKernels;
import dev.lazarus.kt.quant.legacy.LegacyQuantKernels;
import dev.lazarus.kt.quant.legacy.LegacyVectorKernel;
import dev.lazarus.kt.quant.legacy.Q4_0RepackedKernel;
import dev.lazarus.kt.quant.lowbit.SubBlockKQuantKernel;
import dev.lazarus.kt.quant.lowbit.TableBlockKernel;
import dev.lazarus.kt.quant.q4k.Q4KInt16InPlaceKernel;
import dev.lazarus.kt.quant.q4k.Q4KNativePacked;
import dev.lazarus.kt.quant.q4k.Q4KPacked;
import dev.lazarus.kt.quant.q4k.Q4KQ5KKernel;
import dev.lazarus.kt.quant.q6k.Q6KInt16Kernel;
import dev.lazarus.kt.quant.q8_0.Q8_0Kernel;
import dev.lazarus.kt.quant.q8_0.Q8_0NativePacked;
import dev.lazarus.kt.tensor.NativeKernels.Kernel;
import dev.lazarus.kt.tensor.GgmlOrders;
import dev.lazarus.kt.tensor.KernelConfig;
import dev.lazarus.kt.tensor.NativeKernels;
import dev.lazarus.kt.tensor.RowKernel;

/**
 * The one selection table of the row kernels of a matrix: native rows ({@link #nativeRow}, {@link #nativeCopy}) and
 * Java rows ({@link #java}), each line with its reason. Each choice is the order llama-server's CPU backend takes for
 * such a matrix, so a kernel is chosen by three things:
 *
 * <ul>
 *   <li><b>the host</b>: the native kernels where the backend's {@link KernelConfig} selects them and
 *       {@link #nativeRow} has a row for the matrix; else the one Java kernel of
 *       the type in the same orders ({@link #java}), the portable path and the readable reference;</li>
 *   <li><b>the layout llama-server reads</b>: the types it repacks at load ({@code *_8x8}: Q4_0, Q4_K, Q2_K, IQ4_NL,
 *       MXFP4) are repacked only where the rows are a multiple of 8 and the matrix is not a slice of a 3-D weight;
 *       a repacked matrix rounds in the repacked GEMV's order (the Java kernels read ggml's blocks in place in it);</li>
 *   <li><b>the multiplication</b> ({@link Use}): a dense weight's batch takes the repacked GEMM's order for its
 *       fours; a routed expert (mul_mat_id) takes the one-vector path for every token; a batch of
 *       {@link KernelTable#TILED_MIN_BATCH} or more on a K-quant that is not repacked takes the tiled matmul.</li>
 * </ul>
 *
 * {@link WeightMatrices} builds matrices from these choices; the copies it makes at load (the RAM tier's and the native
 * kernels' layouts) are its own {@code Copy} table, whose native 16-row layouts take {@link #nativeCopy}'s rows.
 *
 * @param single the kernel of one vector (and of every vector where the other two are null)
 * @param group  the kernel of a batch's fours, where llama-server rounds them in its GEMM order; or null
 * @param tiled  the kernel of every vector of a batch of {@link KernelTable#TILED_MIN_BATCH} or more; or null
 */
record KernelTable(RowKernel single, RowKernel group, RowKernel tiled) {

    /**
     * The fewest activation rows (per matrix, or per expert) for which llama.cpp takes its tiled matmul (ggml-cpu
     * {@code tiled/}) on a K-quant it did not repack, instead of the row-by-row vec_dot.
     */
    static final int TILED_MIN_BATCH = 8;

    /** Which of llama-server's multiplications a matrix stands for. */
    enum Use {
        /** mul_mat of a 2-D weight: a repacked type rounds a batch's fours in its GEMM order. */
        DENSE,
        /** mul_mat_id of a routed expert: every token of a batch through the one-vector path, no GEMM. */
        EXPERT,
        /** A slice of a 3-D weight multiplied with a plain batched mul_mat (deepseek2's attn_k_b): never repacked. */
        SLICE
    }

    /**
     * A native row: the library's kernels by id ({@code lz_driver.h}), bound to the host's instruction set by
     * {@link #bind}; each the native form of the Java kernel of the same order, bit for bit ({@code NativeKernelsTest}).
     */
    record Native(Kernel single, Kernel group, Kernel tiled) {

        KernelTable bind(NativeKernels.Isa isa) {
            return new KernelTable(NativeRowKernel.of(single, isa), bound(group, isa), bound(tiled, isa));
        }

        private static NativeRowKernel bound(Kernel kernel, NativeKernels.Isa isa) {
            return kernel == null ? null : NativeRowKernel.of(kernel, isa);
        }
    }

    private static final RowKernel Q2K_GEMV = new SubBlockKQuantKernel(GgmlType.Q2_K, SubBlockKQuantKernel.Order.REPACKED_GEMV);
    private static final RowKernel Q2K_GEMM = new SubBlockKQuantKernel(GgmlType.Q2_K, SubBlockKQuantKernel.Order.REPACKED_GEMM);

    /** A dense matrix: batches take llama-server's GEMM order in fours where it has one. */
    static KernelTable dense(GgmlType type, int rows, int cols, KernelConfig config) {
        return select(type, rows, cols, Use.DENSE, config);
    }

    /** A routed expert's matrix: every token of a batch through the one-vector path (no four-row GEMM). */
    static KernelTable expert(GgmlType type, int rows, int cols, KernelConfig config) {
        return select(type, rows, cols, Use.EXPERT, config);
    }

    /** A slice of a 3-D weight: ggml's vec_dot and tiled orders on ggml's blocks, in Java. */
    static KernelTable inPlace(GgmlType type, KernelConfig config) {
        return java(type, false, Use.SLICE, config.orders());
    }

    /** The native kernels where they are selected and have a row for the matrix, else {@link #java}. */
    static KernelTable select(GgmlType type, int rows, int cols, Use use, KernelConfig config) {
        NativeKernels.Isa isa = use != Use.SLICE ? config.nativeIsa().orElse(null) : null;
        Native n = isa != null ? nativeRow(type, rows, cols, use) : null;
        return n != null ? n.bind(isa) : java(type, use != Use.SLICE && rows % 8 == 0, use, config.orders());
    }

    /** Whether {@code config} selects the native kernels and they read such a matrix on ggml's blocks. */
    static boolean nativeCovers(GgmlType type, int rows, int cols, KernelConfig config) {
        return config.nativeSelected() && nativeRow(type, rows, cols, Use.EXPERT) != null;
    }

    /**
     * The native kernels of a matrix copied at load into a native 16-row layout ({@link #nativeCopy}), or null where
     * they are not selected or make no such copy of it here.
     */
    static KernelTable copied(GgmlType type, int rows, int cols, Use use, KernelConfig config) {
        NativeKernels.Isa isa = config.nativeIsa().orElse(null);
        Native n = isa != null ? nativeCopy(type, rows, cols, use, isa) : null;
        return n == null ? null : n.bind(isa);
    }

    /**
     * The native kernels of a matrix on ggml's blocks, or null: the Java kernels run it. The orders are the Java rows'
     * ({@link #java}); a type is native here only where its kernel measured faster than the Java one
     * (docs/benchmarks.md#kernel-findings).
     *
     * @param rows rows a multiple of 8: what llama-server repacks (as {@link #java}'s {@code repacked})
     */
    static Native nativeRow(GgmlType type, int rows, int cols, Use use) {
        if (use == Use.SLICE) {
            return null; // a 3-D slice is read in vec_dot's and the tiled order on its own offsets: Java only
        }
        boolean repacked = rows % 8 == 0;
        boolean dense = use == Use.DENSE;
        return switch (type) {
            // vec_dot_q8_0_q8_0 (never repacked on AVX-512)
            case Q8_0 -> row(Kernel.Q8_0, null, null);
            // q4_K_8x8's GEMV, its GEMM for a dense batch's fours: 3x the Java int16 kernels on ggml's blocks
            // (ExpertKernelBench); not repacked: the Java vec_dot and tiled kernels
            case Q4_K -> repacked && cols % 256 == 0 ? row(Kernel.Q4K_GEMV, dense ? Kernel.Q4K_GEMM : null, null) : null;
            // never repacked on x86: vec_dot, the tiled matmul from eight vectors
            case Q6_K -> row(Kernel.Q6K, null, Kernel.Q6K_TILED);
            // the low-bit types (lz_lowbit.h, lz_grid.h): native wherever the library loads, their Java kernels are
            // scalar reference loops. q2_K_8x8 where repacked (GEMV, GEMM for a dense batch's fours), else as Q3_K
            case Q2_K -> repacked
                    ? row(Kernel.Q2K_GEMV, dense ? Kernel.Q2K_GEMM : null, null)
                    : row(Kernel.Q2K, null, Kernel.Q2K_TILED);
            case Q3_K -> row(Kernel.Q3K, null, Kernel.Q3K_TILED);
            case IQ4_XS -> row(Kernel.IQ4XS, null, Kernel.IQ4XS_TILED);
            // iq4_nl_8x8, mxfp4_8x8: one accumulator, GEMV and GEMM alike
            case IQ4_NL -> row(repacked ? Kernel.IQ4NL_REPACKED : Kernel.IQ4NL, null, null);
            case MXFP4 -> row(repacked ? Kernel.MXFP4_REPACKED : Kernel.MXFP4, null, null);
            // the grid I-quants: vec_dot, the tiled matmul from eight vectors
            case IQ2_XXS -> row(Kernel.IQ2XXS, null, Kernel.IQ2XXS_TILED);
            case IQ2_XS -> row(Kernel.IQ2XS, null, Kernel.IQ2XS_TILED);
            case IQ2_S -> row(Kernel.IQ2S, null, Kernel.IQ2S_TILED);
            case IQ3_XXS -> row(Kernel.IQ3XXS, null, Kernel.IQ3XXS_TILED);
            case IQ3_S -> row(Kernel.IQ3S, null, Kernel.IQ3S_TILED);
            case IQ1_S -> row(Kernel.IQ1S, null, Kernel.IQ1S_TILED);
            case IQ1_M -> row(Kernel.IQ1M, null, Kernel.IQ1M_TILED);
            // F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q5_K: the Java kernels
            default -> null;
        };
    }

    /**
     * The native kernels of a matrix copied at load into a native 16-row layout (the RAM tier's experts, the dense
     * matrices {@link WeightMatrices#repacked} copies), on {@code isa}, or null where no such copy is made: then
     * {@link WeightMatrices}' {@code Copy} table copies it otherwise (or not at all) and {@link #select} picks.
     */
    static Native nativeCopy(GgmlType type, int rows, int cols, Use use, NativeKernels.Isa isa) {
        return switch (type) {
            // Q4KNativePacked: the repacked GEMV (GEMM for a dense batch's fours) measured faster than on ggml's
            // blocks and than the Java int16 kernels on Q4KPacked (Q4_K_M decode, docs/benchmarks.md#kernel-findings)
            case Q4_K -> Q4KNativePacked.fits(rows, cols)
                    ? row(Kernel.Q4K16_GEMV, use == Use.DENSE ? Kernel.Q4K16_GEMM : null, null) : null;
            // Q8_0NativePacked: a vpdpbusd of 16 rows, faster than Q8_0 on ggml's blocks at one thread (decode and
            // prefill, docs/benchmarks.md#kernel-findings); the AVX2 unit has only a scalar one, so AVX-512 VNNI only
            case Q8_0 -> isa == NativeKernels.Isa.AVX512_VNNI && Q8_0NativePacked.fits(rows, cols)
                    ? row(Kernel.Q8_0_16, null, null) : null;
            default -> null;
        };
    }

    private static Native row(Kernel single, Kernel group, Kernel tiled) {
        return new Native(single, group, tiled);
    }

    /**
     * The Java kernels of {@code type}: each (block layout × exact-integer stage × float fold), named in its class.
     *
     * @param repacked whether llama-server would repack such a matrix (rows a multiple of 8, not a slice): where it
     *                 repacks the type, the repacked orders
     */
    static KernelTable java(GgmlType type, boolean repacked, Use use, GgmlOrders orders) {
        boolean dense = use == Use.DENSE;
        return switch (type) {
            // ggml's vec_dot, bit for bit (GgmlFloatKernels, FloatKernels); no batch order of their own
            case F32 -> one(GgmlFloatKernels::f32);
            case F16 -> one(GgmlFloatKernels::f16);
            case BF16 -> one(FloatKernels.bf16Kernel(orders));
            // ggml's lane orders (LegacyQuantKernels); Q8_0 is never repacked on AVX-512
            case Q8_0 -> one(Q8_0Kernel.INSTANCE);
            // q4_0_8x8: one accumulator per row in its GEMV and GEMM alike, so no group kernel
            case Q4_0 -> one(repacked ? Q4_0RepackedKernel.INSTANCE : LegacyVectorKernel.of(type));
            case Q4_1, Q5_0, Q5_1 -> one(LegacyVectorKernel.of(type));
            // q4_K_8x8: the repacked GEMV (and its GEMM for a dense batch's fours) on ggml's blocks in int16 products;
            // not repacked: vec_dot, and the tiled matmul from eight vectors, one f32-lane stage (Q4KQ5KKernel)
            case Q4_K -> repacked
                    ? new KernelTable(Q4KInt16InPlaceKernel.INSTANCE, dense ? Q4KInt16InPlaceKernel.GEMM : null, null)
                    : new KernelTable(Q4KQ5KKernel.Q4_K_IN_PLACE, null, Q4KQ5KKernel.Q4_K_TILED);
            // never repacked on x86: vec_dot, and the tiled matmul from eight vectors, one f32-lane stage
            case Q5_K -> new KernelTable(Q4KQ5KKernel.Q5_K, null, Q4KQ5KKernel.Q5_K_TILED);
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
