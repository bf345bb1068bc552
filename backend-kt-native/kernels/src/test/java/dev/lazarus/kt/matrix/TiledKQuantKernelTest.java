package dev.lazarus.kt.matrix;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.gguf.GgmlCodec;
import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.quant.q4k.Q4KQ5KKernel;
import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.Layouts;
import dev.lazarus.kt.tensor.VecDotType;
import dev.lazarus.kt.tensor.WeightMatrix;
import java.lang.foreign.MemorySegment;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link Q4KQ5KKernel.Order#TILED} against llama-server's tiled matmul order stated one value at a time here
 * ({@link #tiledOrder}): equal bit for bit on encoded weights and fresh activations. And the routing in
 * {@link KernelMatrix}: a batch below {@link KernelTable#TILED_MIN_BATCH} vectors keeps the vec_dot kernel.
 */
public class TiledKQuantKernelTest {

    /** The K-quants llama-server multiplies in its tiled order where it does not repack them. */
    static final java.util.Set<GgmlType> TILED_TYPES = java.util.EnumSet.of(GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q6_K);

    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"Q4_K", "Q5_K"})
    void vectorFormRoundsExactlyAsTiledOrder(GgmlType type) {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        int rows = 1 + rnd.nextInt(9);
        int cols = 256 * (1 + rnd.nextInt(4));
        MemorySegment w = MemorySegment.ofArray(GgmlCodec.encode(type, KernelEquivalenceTest.gaussian(rnd, rows * cols)));
        for (int r = 0; r < rows; r++) {
            long offset = r * type.bytesFor(cols);
            Activation x = Activation.allocate(VecDotType.Q8_K, cols).set(KernelEquivalenceTest.gaussian(rnd, cols));
            assertThat((type == GgmlType.Q5_K ? Q4KQ5KKernel.Q5_K_TILED : Q4KQ5KKernel.Q4_K_TILED).dot(w, offset, x, cols)).as("%s seed=%dL row %d of %d×%d", type, seed, r, rows, cols)
                    .isEqualTo(tiledOrder(type, w, offset, x, cols));
        }
    }

    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"Q5_K", "Q6_K"})
    void onlyBatchesOfEightOrMoreTakeTheTiledKernel(GgmlType type) {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        int rows = 8, cols = 512;
        MemorySegment data = MemorySegment.ofArray(GgmlCodec.encode(type, KernelEquivalenceTest.gaussian(rnd, rows * cols)));
        WeightMatrix m = WeightMatrices.defaults().of(type, data, rows, cols);
        WeightMatrix tiled = new KernelMatrix(type, data, rows, cols, (seg, offset, x, n) -> tiledOrder(type, seg, offset, x, n));
        for (int vectors : new int[] {KernelTable.TILED_MIN_BATCH - 1, KernelTable.TILED_MIN_BATCH}) {
            float[][] xs = new float[vectors][];
            for (int b = 0; b < vectors; b++) {
                xs[b] = KernelEquivalenceTest.gaussian(rnd, cols);
            }
            float[][] batched = new float[vectors][rows];
            m.matmul(xs, batched, 0, rows);
            for (int b = 0; b < vectors; b++) {
                float[] expected = new float[rows];
                (vectors >= KernelTable.TILED_MIN_BATCH ? tiled : m).matvec(xs[b], expected, 0, rows);
                assertThat(batched[b]).as("%s seed=%dL vector %d of %d", type, seed, b, vectors).containsExactly(expected);
            }
        }
    }

    /**
     * Per 256-value super-block the exact integers {@code s1 = Σ scale·q·y} (Q6_K: with {@code q - 32}) and
     * {@code s2 = Σ min·bsum}, then {@code v = d·(float) s1}, {@code v = fma(-dmin, (float) s2, v)},
     * {@code acc = fma(v, d_y, acc)}.
     */
    public static float tiledOrder(GgmlType type, MemorySegment w, long o, Activation x, int n) {
        float acc = 0;
        for (int b = 0; b < n / 256; b++) {
            long blk = o + (long) type.typeSize() * b;
            int s1 = 0, s2 = 0;
            float v;
            if (type == GgmlType.Q6_K) {
                for (int e = 0; e < 256; e++) {
                    int h = e / 128, g = (e % 128) / 32, l = e % 32;
                    int low = Layouts.u8(w, blk + 64L * h + 32L * (g & 1) + l);
                    int q = ((g < 2 ? low & 0xF : low >> 4) | ((Layouts.u8(w, blk + 128 + 32L * h + l) >> (2 * g)) & 3) << 4) - 32;
                    s1 += Layouts.i8(w, blk + 192 + e / 16) * q * (int) x.values[256 * b + e];
                }
                v = Layouts.f16(w, blk + 208) * (float) s1;
            } else {
                boolean five = type == GgmlType.Q5_K;
                long qs = blk + (five ? 48 : 16);
                for (int e = 0; e < 256; e++) {
                    int j = e / 32, l = e % 32;
                    int byteVal = Layouts.u8(w, qs + 32L * (j / 2) + l);
                    int q = ((j & 1) == 0 ? byteVal & 0xF : byteVal >> 4) | (five ? ((Layouts.u8(w, blk + 16 + l) >> j) & 1) << 4 : 0);
                    s1 += Layouts.kScale(w, blk + 4, j) * q * (int) x.values[256 * b + e];
                }
                for (int j = 0; j < 8; j++) {
                    s2 += Layouts.kMin(w, blk + 4, j) * (x.bsums[16 * b + 2 * j] + x.bsums[16 * b + 2 * j + 1]);
                }
                v = Math.fma(-Layouts.f16(w, blk + 2), (float) s2, Layouts.f16(w, blk) * (float) s1);
            }
            acc = Math.fma(v, x.scales[b], acc);
        }
        return acc;
    }
}
