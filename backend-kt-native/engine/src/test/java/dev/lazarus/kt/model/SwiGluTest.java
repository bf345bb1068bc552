package dev.lazarus.kt.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.matrix.WeightMatrices;
import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.tensor.WeightMatrix;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;
import org.junit.jupiter.api.Test;

class SwiGluTest {

    private static final int DIM = 64, HIDDEN = 96;
    private final Random random = new Random(11);

    @Test
    void onePassOverSeveralNetworksMatchesEachNetworkAlone() {
        SwiGlu.Weights[] nets = {net(HIDDEN), net(HIDDEN), net(2 * HIDDEN)};
        float[][][] inputs = {vectors(1), vectors(3), vectors(2)};
        float[][][] together;
        try (Parallel pool = Parallel.ofThreads(3)) {
            together = SwiGlu.apply(pool, nets, inputs);
        }
        try (Parallel one = Parallel.ofThreads(1)) {
            for (int j = 0; j < nets.length; j++) {
                float[][] alone = SwiGlu.apply(one, new SwiGlu.Weights[] {nets[j]}, new float[][][] {inputs[j]})[0];
                assertThat(together[j]).as("network %d", j).isDeepEqualTo(alone);
                assertThat(alone[0]).isEqualTo(reference(nets[j], inputs[j][0]));
            }
        }
    }

    @Test
    void aFailingNetworkFailsTheCallInsteadOfStallingTheOthers() {
        // down expects more hidden values than gate and up produce: converting them for down throws
        SwiGlu.Weights broken = new SwiGlu.Weights(matrix(HIDDEN, DIM), matrix(HIDDEN, DIM), matrix(DIM, 2 * HIDDEN));
        SwiGlu.Weights[] nets = {broken, net(HIDDEN), net(HIDDEN)};
        float[][][] inputs = {vectors(1), vectors(1), vectors(1)};
        try (Parallel pool = Parallel.ofThreads(3)) {
            assertThatThrownBy(() -> SwiGlu.apply(pool, nets, inputs)).isInstanceOf(RuntimeException.class);
        }
    }

    /** down(silu(gate·x) * up·x) with the matrices' own single-vector products. */
    private static float[] reference(SwiGlu.Weights w, float[] x) {
        float[] g = new float[w.hidden()], u = new float[w.hidden()], h = new float[w.hidden()];
        float[] out = new float[w.down().rows()];
        w.gate().matvec(x, g, 0, g.length);
        w.up().matvec(x, u, 0, u.length);
        for (int r = 0; r < h.length; r++) {
            h[r] = Numerics.silu(g[r], r, h.length) * u[r];
        }
        w.down().matvec(h, out, 0, out.length);
        return out;
    }

    private SwiGlu.Weights net(int hidden) {
        return new SwiGlu.Weights(matrix(hidden, DIM), matrix(hidden, DIM), matrix(DIM, hidden));
    }

    private WeightMatrix matrix(int rows, int cols) {
        MemorySegment data = Arena.ofAuto().allocate((long) rows * cols * Float.BYTES);
        for (long i = 0; i < (long) rows * cols; i++) {
            data.setAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i, (float) random.nextGaussian() * 0.1f);
        }
        return WeightMatrices.defaults().of(GgmlType.F32, data, rows, cols);
    }

    private float[][] vectors(int count) {
        float[][] xs = new float[count][DIM];
        for (float[] x : xs) {
            for (int i = 0; i < DIM; i++) {
                x[i] = (float) random.nextGaussian();
            }
        }
        return xs;
    }
}
