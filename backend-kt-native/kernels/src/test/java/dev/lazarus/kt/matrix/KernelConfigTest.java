package dev.lazarus.kt.matrix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.kt.gguf.GgmlCodec;
import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.quant.floats.FloatKernels;
import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.GgmlOrders;
import dev.lazarus.kt.tensor.KernelConfig;
import dev.lazarus.kt.tensor.NativeKernels;
import dev.lazarus.kt.tensor.VecDotType;
import dev.lazarus.kt.tensor.WeightMatrix;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The kernel choice is a value of each backend ({@link KernelConfig}), not of the JVM: matrices made under two
 * configurations in one JVM, interleaved, each multiply with their own kernels.
 */
class KernelConfigTest {

    private static final int ROWS = 64;
    private static final int COLS = 1024;

    @Test
    void twoConfigurationsInOneJvmEachRoundInTheirOwnGgmlVariantsOrder() {
        Random rnd = new Random(11);
        MemorySegment data = MemorySegment.ofArray(GgmlCodec.encode(GgmlType.BF16, random(rnd, ROWS * COLS)));
        Activation x = Activation.allocate(VecDotType.BF16, COLS).set(random(rnd, COLS));
        // zen4 has AVX512_BF16 (vdpbf16ps), icelake does not: two BF16 dot orders
        WeightMatrix zen4 = WeightMatrices.with(KernelConfig.of("java", "zen4")).of(GgmlType.BF16, data, ROWS, COLS);
        WeightMatrix icelake = WeightMatrices.with(KernelConfig.of("java", "icelake")).of(GgmlType.BF16, data, ROWS, COLS);

        float[] byIcelake = new float[ROWS];
        float[] byZen4 = new float[ROWS];
        icelake.matvec(x, byIcelake, 0, ROWS);
        zen4.matvec(x, byZen4, 0, ROWS);
        for (int r = 0; r < ROWS; r++) {
            long row = 2L * COLS * r;
            assertThat(byZen4[r]).as("row %d, zen4", r).isEqualTo(FloatKernels.bf16Kernel(GgmlOrders.AVX512_BF16).dot(data, row, x, COLS));
            assertThat(byIcelake[r]).as("row %d, icelake", r).isEqualTo(FloatKernels.bf16Kernel(GgmlOrders.AVX512).dot(data, row, x, COLS));
        }
        assertThat(Arrays.equals(byZen4, byIcelake)).as("the two orders round some of %d rows apart", ROWS).isFalse();
    }

    @Test
    void oneConfigurationOnTheJavaKernelsAndOneOnTheNativeOnesWhereTheyRun() {
        Random rnd = new Random(12);
        float[] w = random(rnd, ROWS * COLS);
        MemorySegment data = MemorySegment.ofArray(GgmlCodec.encode(GgmlType.Q8_0, w));
        KernelConfig java = KernelConfig.of("java", null);
        KernelConfig auto = KernelConfig.of("auto", null);
        WeightMatrix onJava = WeightMatrices.with(java).of(GgmlType.Q8_0, data, ROWS, COLS);
        WeightMatrix onAuto = WeightMatrices.with(auto).of(GgmlType.Q8_0, data, ROWS, COLS);

        assertThat(Kernels.of(GgmlType.Q8_0, ROWS, COLS, java)).matches("java-vector-(128|256|512)");
        if (NativeKernels.best().isPresent()) { // the host decides: the library built and a CPU that runs one of its units
            assertThat(Kernels.of(GgmlType.Q8_0, ROWS, COLS, auto)).matches("native-(avx2|avx512-vnni)");
            assertThat(KernelConfig.of("native", null).nativeIsa()).isEqualTo(NativeKernels.best());
        } else {
            assertThat(Kernels.of(GgmlType.Q8_0, ROWS, COLS, auto)).matches("java-vector-(128|256|512)");
            assertThatThrownBy(() -> KernelConfig.of("native", null).nativeIsa())
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("native");
        }
        // either way ggml's vec_dot order, bit for bit
        float[] x = random(rnd, COLS);
        float[] byJava = new float[ROWS];
        float[] byAuto = new float[ROWS];
        onAuto.matvec(x, byAuto, 0, ROWS);
        onJava.matvec(x, byJava, 0, ROWS);
        assertThat(byAuto).isEqualTo(byJava);
    }

    @Test
    void readsABackendsSettings() {
        assertThat(KernelConfig.of(" Java ", "skylakex")).isEqualTo(new KernelConfig(KernelConfig.Choice.JAVA, GgmlOrders.AVX512));
        assertThat(KernelConfig.of("native", "zen4")).isEqualTo(new KernelConfig(KernelConfig.Choice.NATIVE, GgmlOrders.AVX512_BF16));
        assertThat(KernelConfig.of(null, "auto")).isEqualTo(new KernelConfig(KernelConfig.Choice.AUTO, GgmlOrders.forHost()));
        assertThatThrownBy(() -> KernelConfig.of("fast", null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'fast'");
        assertThatThrownBy(() -> KernelConfig.of("auto", "pentium")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'pentium'");
    }

    private static float[] random(Random rnd, int n) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = (float) rnd.nextGaussian();
        }
        return v;
    }
}
