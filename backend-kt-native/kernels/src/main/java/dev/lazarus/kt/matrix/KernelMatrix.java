package dev.lazarus.kt.matrix;

import dev.lazarus.kt.gguf.GgmlCodec;
import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.RowKernel;
import dev.lazarus.kt.tensor.VecDotType;
import dev.lazarus.kt.tensor.WeightMatrix;
import java.lang.foreign.MemorySegment;

/**
 * The one matrix implementation: rows of a memory segment in a ggml block layout, multiplied by a
 * per-type {@link RowKernel}. Everything that is not the inner dot product lives here once for all
 * types: activation conversion into per-thread scratch, row ranges, batching.
 */
final class KernelMatrix implements WeightMatrix {

    /**
     * Rows per tile of a batched product ({@link #matmulPrepared}): each row's products are the same in any tiling, the
     * tile only decides how long a block of weights stays in cache.
     */
    private static final int ROW_TILE = 16;

    /** Vectors of a batch per block ({@link #matmulPrepared}): a multiple of {@link RowKernel#GROUP}. */
    private static final int VECTOR_BLOCK = 32;

    /** Per-thread converted activations, grown on demand and then reused (no allocation when warm). */
    private static final ThreadLocal<Activation[][]> SCRATCH =
            ThreadLocal.withInitial(() -> new Activation[VecDotType.values().length][0]);

    private final GgmlType type;
    private final VecDotType vecDotType;
    private final MemorySegment data;
    private final int rows;
    private final int cols;
    private final long rowBytes;
    private final RowKernel kernel;
    /**
     * The kernel for the activation rows of a batch that llama-server multiplies four at a time (its
     * repacked GEMM rounds differently from its GEMV), or null where every row takes {@link #kernel}.
     */
    private final RowKernel groupKernel;
    /**
     * The kernel for every vector of a batch of at least {@link KernelTable#TILED_MIN_BATCH}, where llama-server
     * switches a K-quant matrix it did not repack to its tiled matmul, or null where it has no such switch.
     */
    private final RowKernel tiledKernel;
    /** Dequantizes a row of a repacked layout, or null for ggml's own ({@link GgmlCodec#decode}). */
    private final RowDecoder decoder;

    /** A row of a repacked layout as f32, exactly as ggml dequantizes the original row. */
    @FunctionalInterface
    interface RowDecoder {
        void decode(MemorySegment data, int row, float[] dst, int dstOffset);
    }

    KernelMatrix(GgmlType type, MemorySegment data, int rows, int cols, RowKernel kernel) {
        this(type, data, rows, cols, kernel, null, null);
    }

    /**
     * With {@code groupKernel} for the first {@code count - count % 4} vectors of a batch of {@code count ≥ 4},
     * and {@code tiledKernel} for all vectors of a batch of {@code count ≥} {@link KernelTable#TILED_MIN_BATCH}
     * (either may be null).
     */
    KernelMatrix(GgmlType type, MemorySegment data, int rows, int cols, RowKernel kernel, RowKernel groupKernel,
                 RowKernel tiledKernel) {
        this(type, data, rows, cols, ggmlRowBytes(type, cols), ggmlRowBytes(type, cols) * rows, kernel, groupKernel,
                tiledKernel, null);
    }

    /**
     * A matrix in a repacked layout of {@code type}'s numbers: row r's kernel offset is {@code r · rowBytes}, the
     * segment holds {@code bytes}, and {@code decoder} dequantizes a row.
     */
    KernelMatrix(GgmlType type, MemorySegment data, int rows, int cols, long rowBytes, long bytes,
                 RowKernel kernel, RowKernel groupKernel, RowKernel tiledKernel, RowDecoder decoder) {
        if (rows < 1 || cols < 1 || cols % type.blockSize() != 0) {
            throw new IllegalArgumentException("%s matrix of %d × %d: cols must be a positive multiple of %d"
                    .formatted(type, rows, cols, type.blockSize()));
        }
        this.vecDotType = VecDotType.of(type);
        // any row length of whole blocks: the float kernels add ggml's tails past their vector steps
        if (cols % vecDotType.blockSize() != 0) {
            throw new IllegalArgumentException("%s matrix: cols %d must be a multiple of %d"
                    .formatted(type, cols, vecDotType.blockSize()));
        }
        this.rowBytes = rowBytes;
        if (data.byteSize() < bytes) {
            throw new IllegalArgumentException("%s matrix of %d × %d needs %d bytes, segment has %d"
                    .formatted(type, rows, cols, bytes, data.byteSize()));
        }
        this.type = type;
        this.data = data;
        this.rows = rows;
        this.cols = cols;
        this.kernel = kernel;
        this.groupKernel = groupKernel;
        this.tiledKernel = tiledKernel;
        this.decoder = decoder;
    }

    /** ggml's bytes per row (0 for a bad {@code cols}, which the constructor then rejects with its own message). */
    private static long ggmlRowBytes(GgmlType type, int cols) {
        return cols > 0 && cols % type.blockSize() == 0 ? type.bytesFor(cols) : 0;
    }

    @Override
    public int rows() {
        return rows;
    }

    @Override
    public int cols() {
        return cols;
    }

    @Override
    public GgmlType type() {
        return type;
    }

    @Override
    public VecDotType vecDotType() {
        return vecDotType;
    }

    @Override
    public void matvec(float[] x, float[] out, int rowStart, int rowEnd) {
        matvec(scratch(1)[0].set(x, cols), out, rowStart, rowEnd);
    }

    @Override
    public void matvec(Activation x, float[] out, int rowStart, int rowEnd) {
        check(x);
        checkRange(rowStart, rowEnd);
        rows(x, out, rowStart, rowEnd);
    }

    /**
     * The whole row range to the kernel ({@link RowKernel#dotRows}; repacked Q4_K takes rows in pairs): decode
     * streams the weights from DRAM, where kernels that interleave more rows (tried: four rows per activation
     * load, in an earlier layout) measured slower than fewer sequential streams.
     */
    private void rows(Activation x, float[] out, int rowStart, int rowEnd) {
        kernel.dotRows(data, rowBytes, x, cols, out, rowStart, rowEnd);
    }

    @Override
    public void matmul(float[][] xs, float[][] outs, int rowStart, int rowEnd) {
        Activation[] as = scratch(xs.length);
        for (int b = 0; b < xs.length; b++) {
            as[b].set(xs[b], cols);
        }
        matmulPrepared(as, xs.length, outs, rowStart, rowEnd);
    }

    @Override
    public void matmul(Activation[] xs, float[][] outs, int rowStart, int rowEnd) {
        for (Activation x : xs) {
            check(x);
        }
        matmulPrepared(xs, xs.length, outs, rowStart, rowEnd);
    }

    /**
     * In tiles of {@link #ROW_TILE} rows and blocks of {@link #VECTOR_BLOCK} vectors, each row of a tile against the
     * block's vectors four at a time ({@link RowKernel#dotBatch}): the tile's weights (a few KB a row) stay in the
     * first-level cache for all vectors, and a block's converted activations are fetched from the outer caches
     * once per tile instead of once per row (a prefill batch's activations, about 1 MB per 512 vectors of 1024
     * Q8_K values in their int16 orders, outgrow the second-level cache). The weight bytes still cross the memory
     * bus once per batch. Every product is computed as before: llama-server's GEMM order for groups of four where
     * it rounds them its own way ({@code groupKernel}), its tiled order for batches of
     * {@link KernelTable#TILED_MIN_BATCH} ({@code tiledKernel}), else the kernel's batched form.
     */
    private void matmulPrepared(Activation[] xs, int count, float[][] outs, int rowStart, int rowEnd) {
        checkRange(rowStart, rowEnd);
        if (count == 1) {
            rows(xs[0], outs[0], rowStart, rowEnd);
            return;
        }
        if (kernel instanceof NativeRowKernel single) {
            // tiles and the choice of order per vector in the native library, one call per order
            NativeRowKernel.matmul(data, rowBytes, cols, single, (NativeRowKernel) groupKernel,
                    (NativeRowKernel) tiledKernel, xs, count, outs, rowStart, rowEnd);
            return;
        }
        RowKernel batchKernel = tiledKernel != null && count >= KernelTable.TILED_MIN_BATCH ? tiledKernel : kernel;
        // llama-server's repacked GEMM takes the vectors of a batch four at a time and rounds them its own way
        int grouped = groupKernel == null || batchKernel == tiledKernel ? 0 : count - count % RowKernel.GROUP;
        int vectorBlock = VECTOR_BLOCK;
        for (int tile = rowStart; tile < rowEnd; tile += ROW_TILE) {
            int tileEnd = Math.min(rowEnd, tile + ROW_TILE);
            for (int from = 0; from < count; from += vectorBlock) {
                int to = Math.min(count, from + vectorBlock), groupedTo = Math.min(to, grouped);
                for (int r = tile; r < tileEnd; r++) {
                    long offset = r * rowBytes;
                    for (int b = from; b < groupedTo; b += RowKernel.GROUP) {
                        groupKernel.dotVectors4(data, offset, xs, b, cols, outs, r);
                    }
                    batchKernel.dotBatch(data, offset, xs, Math.max(from, groupedTo), to, cols, outs, r);
                }
            }
        }
    }

    @Override
    public void dequantizeRow(int row, float[] dst, int dstOffset) {
        checkRange(row, row + 1);
        if (decoder != null) {
            decoder.decode(data, row, dst, dstOffset);
        } else {
            GgmlCodec.decode(type, data, row * rowBytes, dst, dstOffset, cols);
        }
    }

    private Activation[] scratch(int count) {
        Activation[][] perType = SCRATCH.get();
        Activation[] as = perType[vecDotType.ordinal()];
        if (as.length < count || as[0].capacity() < cols) {
            int capacity = Math.max(cols, as.length > 0 ? as[0].capacity() : 0);
            as = new Activation[Math.max(count, as.length)];
            for (int i = 0; i < as.length; i++) {
                as[i] = Activation.allocate(vecDotType, capacity);
            }
            perType[vecDotType.ordinal()] = as;
        }
        return as;
    }

    private void check(Activation x) {
        if (x.type() != vecDotType || x.length() != cols) {
            throw new IllegalArgumentException("%s matrix with %d cols needs a %s activation of %d values, got %s of %d"
                    .formatted(type, cols, vecDotType, cols, x.type(), x.length()));
        }
    }

    private void checkRange(int rowStart, int rowEnd) {
        if (rowStart < 0 || rowEnd > rows || rowStart > rowEnd) {
            throw new IndexOutOfBoundsException("rows [%d, %d) of %d".formatted(rowStart, rowEnd, rows));
        }
    }

    @Override
    public String toString() {
        return "%s[%d × %d]".formatted(type, rows, cols);
    }
}
