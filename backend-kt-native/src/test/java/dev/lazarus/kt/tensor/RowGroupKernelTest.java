package dev.lazarus.kt.tensor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.gguf.GgmlCodec;
import dev.lazarus.kt.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The multi-row kernels ({@link RowKernel#dot4}) must give each row exactly what the one-row
 * kernel gives, so that a row's result does not depend on where a thread's chunk starts.
 */
class RowGroupKernelTest {

    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"F32", "F16", "BF16", "Q8_0", "Q4_K", "Q5_K", "Q6_K"})
    void groupOfRowsIsBitIdenticalToSingleRows(GgmlType type) {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        int rows = RowKernel.GROUP * (1 + rnd.nextInt(3)) + rnd.nextInt(RowKernel.GROUP);
        int cols = 256 * (1 + rnd.nextInt(4));
        MemorySegment data = MemorySegment.ofArray(GgmlCodec.encode(type, KernelEquivalenceTest.gaussian(rnd, rows * cols)));
        WeightMatrix m = WeightMatrices.of(type, data, rows, cols);
        Activation x = Activation.allocate(m.vecDotType(), cols).set(KernelEquivalenceTest.gaussian(rnd, cols));

        float[] grouped = new float[rows];
        m.matvec(x, grouped, 0, rows);
        for (int r = 0; r < rows; r++) {
            float[] single = new float[rows];
            m.matvec(x, single, r, r + 1);
            assertThat(grouped[r]).as("%s seed=%dL row %d of %d×%d", type, seed, r, rows, cols).isEqualTo(single[r]);
        }
    }
}
