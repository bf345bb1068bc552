package dev.lazarus.kt.matrix;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.gguf.GgufException;
import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.gguf.GgufTensorInfo;
import dev.lazarus.kt.quant.q4k.Q4KInt16Kernel;
import dev.lazarus.kt.quant.q4k.Q4KNativePacked;
import dev.lazarus.kt.quant.q4k.Q4KPacked;
import dev.lazarus.kt.quant.q6k.Q6KPacked;
import dev.lazarus.kt.quant.q6k.Q6KPackedKernel;
import dev.lazarus.kt.quant.q8_0.Q8_0NativePacked;
import dev.lazarus.kt.tensor.KernelConfig;
import dev.lazarus.kt.tensor.RowGroups;
import dev.lazarus.kt.tensor.WeightMatrix;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.util.Arrays;

/**
 * Creates {@link WeightMatrix} views over tensor bytes (nothing is copied) or RAM-tier copies in cheaper layouts, with
 * the kernels {@link KernelTable} picks under one backend's {@link KernelConfig}: the native kernels where it selects
 * them and they cover the matrix, else the one Java path of its type. The Java kernels' bit-identical alternatives, kept to measure against, live in the bench
 * sources (JavaTwins).
 */
public final class WeightMatrices {

    /**
     * The RAM tier's packed Q4_K and Q6_K rows ({@link Q4KPacked}, {@link Q6KPacked}) lie in interleaved pairs
     * ({@link RowGroups}): the pairs the decode kernels take together, read as one stream.
     */
    private static final int PACKED_GROUP = 2;

    private final KernelConfig config;

    private WeightMatrices(KernelConfig config) {
        this.config = config;
    }

    /** The matrices of a backend whose kernels {@code config} chooses. */
    public static WeightMatrices with(KernelConfig config) {
        return new WeightMatrices(config);
    }

    /** Under {@link KernelConfig#fromSystemProperties}: for tests, benchmarks and tools without a backend's settings. */
    public static WeightMatrices defaults() {
        return with(KernelConfig.fromSystemProperties());
    }

    public KernelConfig config() {
        return config;
    }

    /** A matrix over {@code data} in {@code type}'s layout, with the kernels {@link KernelTable#dense} picks. */
    public WeightMatrix of(GgmlType type, MemorySegment data, int rows, int cols) {
        return matrix(type, data, rows, cols, KernelTable.dense(type, rows, cols, config));
    }

    /** A routed expert's matrix, with the kernels {@link KernelTable#expert} picks (mul_mat_id's orders). */
    public WeightMatrix expert(GgmlType type, MemorySegment data, int rows, int cols) {
        return matrix(type, data, rows, cols, KernelTable.expert(type, rows, cols, config));
    }

    private static KernelMatrix matrix(GgmlType type, MemorySegment data, int rows, int cols, KernelTable k) {
        return new KernelMatrix(type, data, rows, cols, k.single(), k.group(), k.tiled());
    }

    /** Whether the native kernels cover such a matrix: then nothing is repacked (they read ggml's blocks). */
    private boolean nativeCovers(GgmlType type, int rows, int cols) {
        return KernelTable.nativeCovers(type, rows, cols, config);
    }

    /**
     * A routed expert's matrix copied out of {@code data} into memory from {@code alloc} (the RAM tier), 64-byte
     * aligned ({@link Copy} picks the layout): Q4_K and Q8_0 into a native kernels' 16-row layout where they run, else
     * Q4_K that llama-server repacks (rows a multiple of 8) into {@link Q4KPacked}'s cheaper layout when {@code repack} (same results bit for bit, in int16 products), Q6_K into {@link Q6KPacked}'s when {@code repack},
     * anything else as a plain copy of its bytes.
     */
    public WeightMatrix copiedExpert(GgmlType type, MemorySegment data, int rows, int cols, boolean repack,
                                            SegmentAllocator alloc) {
        return switch (copy(type, rows, cols, repack)) {
            case NATIVE_16 -> nativePacked(type, data, rows, cols, alloc, false);
            case Q4K_PACKED -> packedQ4K(data, rows, cols, alloc, PACKED_GROUP);
            case Q6K_PACKED -> packedQ6K(data, rows, cols, alloc, PACKED_GROUP);
            case GGML_BLOCKS -> {
                MemorySegment copy = alloc.allocate(data.byteSize(), 64);
                copy.copyFrom(data);
                yield expert(type, copy, rows, cols);
            }
        };
    }

    /**
     * The bytes {@link #copiedExpert} allocates for a {@code rows × cols} matrix of {@code type} stored in
     * {@code storedBytes}: what the RAM tier holds (the packed Q4_K layout is 152 bytes per super-block, 5.6 % more
     * than ggml's 144; the packed Q6_K one 276, 31 % more than 210), so that its budget counts memory, not file bytes.
     */
    public long copiedExpertBytes(GgmlType type, long storedBytes, int rows, int cols, boolean repack) {
        return switch (copy(type, rows, cols, repack)) {
            case NATIVE_16 -> type == GgmlType.Q8_0 ? Q8_0NativePacked.bytes(rows, cols) : Q4KNativePacked.bytes(rows, cols);
            case Q4K_PACKED -> Q4KPacked.bytes(rows, cols);
            case Q6K_PACKED -> Q6KPacked.bytes(rows, cols);
            case GGML_BLOCKS -> storedBytes;
        };
    }

    /** The layout of a RAM-tier copy ({@link #copiedExpert}): the one place that picks it. */
    private enum Copy {
        /** Q4_K or Q8_0 in a native 16-row layout ({@link Q4KNativePacked}, {@link Q8_0NativePacked}) where it fits. */
        NATIVE_16,
        /** Q4_K that llama-server repacks (rows a multiple of 8), for the Java {@link Q4KInt16Kernel}. */
        Q4K_PACKED,
        /** Q6_K for the Java {@link Q6KPackedKernel}. */
        Q6K_PACKED,
        /** ggml's blocks as stored: anything else, or any type the native kernels cover, or {@code repack} off. */
        GGML_BLOCKS
    }

    /** The layout of a RAM-tier copy: the one place that picks it. */
    private Copy copy(GgmlType type, int rows, int cols, boolean repack) {
        if (!repack) {
            return Copy.GGML_BLOCKS;
        }
        if (nativePacks(type, rows, cols)) {
            return Copy.NATIVE_16;
        }
        if (nativeCovers(type, rows, cols)) {
            return Copy.GGML_BLOCKS;
        }
        if (type == GgmlType.Q4_K && rows % 8 == 0 && cols % 256 == 0) {
            return Copy.Q4K_PACKED;
        }
        return type == GgmlType.Q6_K ? Copy.Q6K_PACKED : Copy.GGML_BLOCKS;
    }

    /**
     * A dense matrix ({@link #of}) copied into the native kernels' layout from {@code alloc} where they take one, as
     * llama-server copies weights into its CPU_REPACK (or AMX) buffers at load: Q4_K into {@link Q4KNativePacked}
     * (decode and llama-server's four-row GEMM orders, bit for bit), Q8_0 into {@link Q8_0NativePacked} (vec_dot's
     * order); any other matrix, and every matrix of the Java kernels (which read Q4_K in place in the same orders),
     * stays a view of {@code data}.
     */
    public WeightMatrix repacked(GgmlType type, MemorySegment data, int rows, int cols, SegmentAllocator alloc) {
        if (nativePacks(type, rows, cols)) {
            return nativePacked(type, data, rows, cols, alloc, true);
        }
        return of(type, data, rows, cols);
    }

    /** Whether {@link #repacked} copies {@code m} into a 16-row layout for the native kernels. */
    public boolean nativeRepacks(WeightMatrix m) {
        return nativePacks(m.type(), m.rows(), m.cols());
    }

    /** Whether a copied matrix goes into a native 16-row layout: {@link Q4KNativePacked}, {@link Q8_0NativePacked}. */
    private boolean nativePacks(GgmlType type, int rows, int cols) {
        return KernelTable.copied(type, rows, cols, KernelTable.Use.EXPERT, config) != null;
    }

    /**
     * Q4_K copied into {@link Q4KNativePacked}'s layout with the native kernels of llama-server's repacked orders: its
     * GEMV, and ({@code withGemm}, dense matrices) its GEMM for the fours of a batch; Q8_0 into
     * {@link Q8_0NativePacked}'s, one kernel for any batch.
     */
    private WeightMatrix nativePacked(GgmlType type, MemorySegment data, int rows, int cols,
                                             SegmentAllocator alloc, boolean withGemm) {
        KernelTable k = KernelTable.copied(type, rows, cols, withGemm ? KernelTable.Use.DENSE : KernelTable.Use.EXPERT, config);
        if (type == GgmlType.Q8_0) {
            MemorySegment packed = Q8_0NativePacked.pack(data, rows, cols, alloc);
            return new KernelMatrix(GgmlType.Q8_0, packed, rows, cols, Q8_0NativePacked.rowBytes(cols),
                    Q8_0NativePacked.bytes(rows, cols), k.single(), k.group(), k.tiled(),
                    (seg, row, dst, at) -> Q8_0NativePacked.dequantizeRow(seg, cols, row, dst, at));
        }
        MemorySegment packed = Q4KNativePacked.pack(data, rows, cols, alloc);
        return new KernelMatrix(GgmlType.Q4_K, packed, rows, cols, Q4KNativePacked.rowBytes(cols),
                Q4KNativePacked.bytes(rows, cols), k.single(), k.group(), k.tiled(),
                (seg, row, dst, at) -> Q4KNativePacked.dequantizeRow(seg, cols, row, dst, at));
    }

    /**
     * A Q6_K matrix copied into {@link Q6KPacked}'s layout (same results bit for bit, 276 bytes per super-block), rows
     * in groups of {@code group} ({@link RowGroups}); batches of {@link KernelTable#TILED_MIN_BATCH} take llama-server's
     * tiled order on it ({@link Q6KPackedKernel#tiled}), as the in-place matrix does.
     */
    static WeightMatrix packedQ6K(MemorySegment data, int rows, int cols, SegmentAllocator alloc, int group) {
        RowGroups groups = new RowGroups(group, rows, cols / 256);
        MemorySegment packed = Q6KPacked.pack(data, groups, alloc);
        return new KernelMatrix(GgmlType.Q6_K, packed, rows, cols, (long) (cols / 256) * Q6KPacked.CODE_BYTES,
                Q6KPacked.bytes(rows, cols), new Q6KPackedKernel(groups), null, Q6KPackedKernel.tiled(groups),
                (seg, row, dst, at) -> Q6KPacked.dequantizeRow(seg, groups, row, dst, at));
    }

    /**
     * A RAM-tier Q4_K expert in {@link Q4KPacked.Order#SHORT_LANES} with {@link Q4KInt16Kernel} (llama-server's
     * repacked GEMV order, int16 products), rows in groups of {@code group} ({@link RowGroups}).
     */
    public static WeightMatrix packedQ4K(MemorySegment data, int rows, int cols, SegmentAllocator alloc, int group) {
        Q4KPacked.Order order = Q4KPacked.Order.SHORT_LANES;
        RowGroups groups = new RowGroups(group, rows, cols / 256);
        MemorySegment packed = Q4KPacked.pack(data, groups, order, alloc);
        return new KernelMatrix(GgmlType.Q4_K, packed, rows, cols, (long) (cols / 256) * Q4KPacked.QUANT_BYTES,
                Q4KPacked.bytes(rows, cols), new Q4KInt16Kernel(groups), null,
                null, (seg, row, dst, at) -> Q4KPacked.dequantizeRow(seg, groups, order, row, dst, at));
    }

    /** A 2-D tensor ({@link #of(GgufFile, GgufTensorInfo)}) through {@link #repacked}. */
    public WeightMatrix repacked(GgufFile file, GgufTensorInfo t, SegmentAllocator alloc) {
        WeightMatrix m = of(file, t);
        return nativePacks(t.type(), m.rows(), m.cols()) ? repacked(t.type(), file.data(t), m.rows(), m.cols(), alloc) : m;
    }

    /**
     * Slice {@code index} of a 3-D weight that llama-server multiplies with a plain batched mul_mat (e.g. one
     * attention head of deepseek2's {@code attn_k_b}/{@code attn_v_b}): never repacked, so Q4_K keeps
     * ggml's in-place vec_dot order.
     */
    public WeightMatrix slice3dInPlace(GgufFile file, GgufTensorInfo t, int index) {
        WeightMatrix m = slice3d(file, t, index);
        long bytes = t.type().bytesFor((long) m.rows() * m.cols());
        return matrix(t.type(), file.data(t).asSlice(bytes * index, bytes), m.rows(), m.cols(), KernelTable.inPlace(t.type(), config));
    }

    /** The same matrix computed by the plain scalar reference kernels (for tests and benchmarks). */
    public static WeightMatrix scalar(GgmlType type, MemorySegment data, int rows, int cols) {
        return new KernelMatrix(type, data, rows, cols, ScalarKernels.of(type));
    }

    /** A 2-D tensor (or a higher-rank one whose extra dimensions are 1). */
    public WeightMatrix of(GgufFile file, GgufTensorInfo t) {
        if (t.rank() < 2 || t.dim(2) != 1 || t.dim(3) != 1) {
            throw new GgufException(file.path() + ": tensor '" + t.name() + "' " + Arrays.toString(t.shape()) + " is not 2-D");
        }
        return of(t.type(), file.data(t), toInt(file, t, t.dim(1)), toInt(file, t, t.dim(0)));
    }

    /** Matrix {@code index}, an {@link #expert}, of a 3-D tensor of shape [cols, rows, n]. */
    public WeightMatrix slice3d(GgufFile file, GgufTensorInfo t, int index) {
        if (t.rank() != 3) {
            throw new GgufException(file.path() + ": tensor '" + t.name() + "' " + Arrays.toString(t.shape()) + " is not 3-D");
        }
        if (index < 0 || index >= t.dim(2)) {
            throw new IndexOutOfBoundsException("tensor '%s': slice %d of %d".formatted(t.name(), index, t.dim(2)));
        }
        int rows = toInt(file, t, t.dim(1)), cols = toInt(file, t, t.dim(0));
        long bytes = t.type().bytesFor((long) rows * cols);
        return expert(t.type(), file.data(t).asSlice(bytes * index, bytes), rows, cols);
    }

    private static int toInt(GgufFile file, GgufTensorInfo t, long dim) {
        if (dim > Integer.MAX_VALUE) {
            throw new GgufException(file.path() + ": tensor '" + t.name() + "' dimension " + dim + " is too large");
        }
        return (int) dim;
    }
}
