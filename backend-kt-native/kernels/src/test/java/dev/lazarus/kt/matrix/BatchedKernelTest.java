package dev.lazarus.kt.matrix;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.gguf.GgmlCodec;
import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.tensor.GgmlKQuantKernels;
import dev.lazarus.kt.tensor.RowKernel;
import dev.lazarus.kt.tensor.WeightMatrix;
import java.lang.foreign.MemorySegment;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The batched kernels ({@link RowKernel#dotVectors4}) must give each product exactly what the
 * one-vector kernel gives, so that a token's result does not depend on how many tokens share a step;
 * except where llama-server itself rounds batches differently: a repacked Q4_K matrix (rows a multiple
 * of 8) takes the vectors of a batch four at a time through its GEMM, whose order
 * {@link GgmlKQuantKernels#q4kRepackedGemm} follows, and the other K-quant matrices take a batch of at least
 * {@link KernelTable#TILED_MIN_BATCH} vectors through its tiled matmul ({@link TiledKQuantKernelTest#tiledOrder}).
 */
class BatchedKernelTest {

    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q4_K", "Q5_K", "Q6_K"})
    void batchOfVectorsRoundsAsLlamaServerDoes(GgmlType type) {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        // a multiple of 8: a Q4_K matrix llama-server repacks; up to 40 rows and 72 vectors: several of the product's
        // tiles of rows and blocks of vectors, and partial ones
        int rows = rnd.nextBoolean() ? 8 * (1 + rnd.nextInt(5)) : 1 + rnd.nextInt(40);
        int cols = 256 * (1 + rnd.nextInt(3));
        int vectors = rnd.nextBoolean() ? 4 + rnd.nextInt(8) : 33 + rnd.nextInt(40); // 4-11: both sides of the tiled path's threshold
        MemorySegment data = MemorySegment.ofArray(GgmlCodec.encode(type, KernelEquivalenceTest.gaussian(rnd, rows * cols)));
        WeightMatrix m = WeightMatrices.defaults().of(type, data, rows, cols);
        float[][] xs = new float[vectors][];
        for (int b = 0; b < vectors; b++) {
            xs[b] = KernelEquivalenceTest.gaussian(rnd, cols);
        }
        boolean gemm = type == GgmlType.Q4_K && rows % 8 == 0;
        WeightMatrix gemmRows = gemm ? new KernelMatrix(type, data, rows, cols, GgmlKQuantKernels::q4kRepackedGemm) : m;
        int grouped = gemm ? vectors - vectors % RowKernel.GROUP : 0;
        boolean tiled = !gemm && TiledKQuantKernelTest.TILED_TYPES.contains(type) && vectors >= KernelTable.TILED_MIN_BATCH;
        WeightMatrix tiledRows = tiled ? new KernelMatrix(type, data, rows, cols,
                (seg, offset, x, n) -> TiledKQuantKernelTest.tiledOrder(type, seg, offset, x, n)) : m;
        float[][] batched = new float[vectors][rows];
        int split = rnd.nextInt(rows + 1); // two row ranges, as two threads take them
        m.matmul(xs, batched, 0, split);
        m.matmul(xs, batched, split, rows);
        for (int b = 0; b < vectors; b++) {
            float[] single = new float[rows];
            (b < grouped ? gemmRows : tiled ? tiledRows : m).matvec(xs[b], single, 0, rows);
            assertThat(batched[b]).as("%s seed=%dL vector %d of %d, %d×%d split at %d", type, seed, b, vectors, rows, cols, split)
                    .containsExactly(single);
        }
    }
}
