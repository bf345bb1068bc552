package dev.lazarus.kt.tensor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.gguf.GgmlCodec;
import dev.lazarus.kt.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The repacked k-quant layout must give exactly the in-place kernels' results (same operations in
 * the same order), on encoded weights and on raw random blocks (bit patterns an encoder never writes),
 * and must dequantize as the original.
 */
class ExpandedKQuantsTest {

    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"Q4_K", "Q5_K", "Q6_K"})
    void repackedMatchesInPlaceBitForBit(GgmlType type) {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        int rows = 1 + rnd.nextInt(9);
        int cols = 256 * (1 + rnd.nextInt(4));
        byte[] bytes = rnd.nextBoolean()
                ? GgmlCodec.encode(type, KernelEquivalenceTest.gaussian(rnd, rows * cols))
                : randomBlocks(type, rows * cols, rnd);
        MemorySegment data = MemorySegment.ofArray(bytes);
        WeightMatrix repacked = WeightMatrices.repacked(type, data, rows, cols);
        WeightMatrix inPlace = WeightMatrices.inPlace(type, data, rows, cols);
        Activation x = Activation.allocate(repacked.vecDotType(), cols).set(KernelEquivalenceTest.gaussian(rnd, cols));

        float[] a = new float[rows], b = new float[rows];
        repacked.matvec(x, a, 0, rows);
        inPlace.matvec(x, b, 0, rows);
        float[] ra = new float[cols], rb = new float[cols];
        for (int r = 0; r < rows; r++) {
            String where = "%s seed=%dL row %d of %d×%d".formatted(type, seed, r, rows, cols);
            assertThat(a[r]).as(where).isEqualTo(b[r]);
            repacked.dequantizeRow(r, ra, 0);
            inPlace.dequantizeRow(r, rb, 0);
            assertThat(ra).as(where).containsExactly(rb);
        }
    }

    /** Random bytes with finite f16 scales, so the sums stay finite and comparable. */
    private static byte[] randomBlocks(GgmlType type, int values, Random rnd) {
        byte[] bytes = new byte[(int) type.bytesFor(values)];
        rnd.nextBytes(bytes);
        MemorySegment s = MemorySegment.ofArray(bytes);
        for (long blk = 0; blk < bytes.length; blk += type.typeSize()) {
            for (long at : type == GgmlType.Q6_K ? new long[] {208} : new long[] {0, 2}) {
                s.set(Layouts.I16, blk + at, Float.floatToFloat16((float) (rnd.nextGaussian() * 0.01)));
            }
        }
        return bytes;
    }
}
