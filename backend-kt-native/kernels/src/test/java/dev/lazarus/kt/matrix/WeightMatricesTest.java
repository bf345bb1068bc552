package dev.lazarus.kt.matrix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.gguf.GgufException;
import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.gguf.GgufWriter;
import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.VecDotType;
import dev.lazarus.kt.tensor.WeightMatrix;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WeightMatricesTest {

    @TempDir
    Path dir;

    @Test
    void matricesAndExpertSlicesComeFromGgufTensors() {
        int cols = 32, rows = 3, experts = 4;
        float[] experts3d = new float[cols * rows * experts];
        for (int e = 0; e < experts; e++) {
            for (int r = 0; r < rows; r++) {
                for (int c = 0; c < cols; c++) {
                    experts3d[(e * rows + r) * cols + c] = e * 10 + r; // row r of expert e is constant e*10+r
                }
            }
        }
        float[] dense = new float[cols * rows];
        java.util.Arrays.fill(dense, 1f);
        Path file = dir.resolve("m.gguf");
        new GgufWriter()
                .addTensor("exps", experts3d, new long[] {cols, rows, experts}, GgmlType.Q8_0)
                .addTensor("dense", dense, new long[] {cols, rows}, GgmlType.F16)
                .write(file);
        float[] ones = new float[cols];
        java.util.Arrays.fill(ones, 1f);
        try (GgufFile f = GgufFile.open(file)) {
            WeightMatrix d = WeightMatrices.defaults().of(f, f.tensor("dense"));
            assertThat(d.rows()).isEqualTo(rows);
            assertThat(d.cols()).isEqualTo(cols);
            float[] out = new float[rows];
            d.matvec(ones, out);
            assertThat(out).containsOnly(32f);

            WeightMatrix e2 = WeightMatrices.defaults().slice3d(f, f.tensor("exps"), 2);
            assertThat(e2.type()).isEqualTo(GgmlType.Q8_0);
            e2.matvec(ones, out);
            // Q8_0 keeps its scale in f16, so the constants come back within f16 precision
            assertThat(out).containsExactly(new float[] {32 * 20f, 32 * 21f, 32 * 22f}, within(32 * 22 * 1e-3f));
            float[] row = new float[cols];
            e2.dequantizeRow(1, row, 0);
            for (float v : row) {
                assertThat(v).isCloseTo(21f, within(0.02f));
            }

            assertThatThrownBy(() -> WeightMatrices.defaults().of(f, f.tensor("exps"))).isInstanceOf(GgufException.class)
                    .hasMessageContaining("'exps'").hasMessageContaining("not 2-D");
            assertThatThrownBy(() -> WeightMatrices.defaults().slice3d(f, f.tensor("exps"), 4)).isInstanceOf(IndexOutOfBoundsException.class);
        }
    }

    @Test
    void wholeMatrixHelpersAgreeWithRangeCalls() {
        int rows = 37, cols = 256;
        float[] w = KernelEquivalenceTest.gaussian(new java.util.Random(1), rows * cols);
        WeightMatrix m = WeightMatrices.defaults().of(GgmlType.Q4_K, MemorySegment.ofArray(dev.lazarus.kt.gguf.GgmlCodec.encode(GgmlType.Q4_K, w)), rows, cols);
        float[] x = KernelEquivalenceTest.gaussian(new java.util.Random(2), cols);
        float[] whole = new float[rows], ranged = new float[rows];
        m.matvec(x, whole);
        m.matvec(x, ranged, 0, 20);
        m.matvec(x, ranged, 20, rows);
        assertThat(whole).containsExactly(ranged);
        float[][] outs = new float[2][rows];
        m.matmul(new float[][] {x, x}, outs);
        assertThat(outs[1]).containsExactly(whole);
    }

    @Test
    void rejectsMismatchedShapesAndActivations() {
        MemorySegment small = MemorySegment.ofArray(new byte[100]);
        assertThatThrownBy(() -> WeightMatrices.defaults().of(GgmlType.Q8_0, small, 4, 32)).hasMessageContaining("needs 136 bytes");
        assertThatThrownBy(() -> WeightMatrices.defaults().of(GgmlType.Q4_K, small, 1, 32)).hasMessageContaining("multiple of 256");
        WeightMatrix m = WeightMatrices.defaults().of(GgmlType.F32, MemorySegment.ofArray(new byte[4 * 32]), 1, 32);
        Activation wrong = Activation.allocate(VecDotType.Q8_0, 32).set(new float[32]);
        assertThatThrownBy(() -> m.matvec(wrong, new float[1], 0, 1)).hasMessageContaining("F32 activation");
        assertThatThrownBy(() -> WeightMatrices.defaults().of(GgmlType.TQ1_0, small, 1, 256)).hasMessageContaining("TQ1_0");
    }
}
