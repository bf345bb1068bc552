package dev.lazarus.kt.backend;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.tensor.KernelConfig;
import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.gguf.GgufTensorInfo;
import dev.lazarus.kt.tensor.NativeKernels;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The {@code kernels} label names the kernels each weight type of the model runs on, on this host. */
class KernelUseTest {

    private static final String JAVA = "java-vector-(128|256|512)";

    @Test
    void typesNoNativeKernelRunsAreJavaWhereverTheNativeKernelsLoad() {
        String label = KernelUse.describe(List.of(matrix(GgmlType.F16, 256, 64), matrix(GgmlType.F32, 64, 8),
                vector(GgmlType.F32), experts(GgmlType.F16, 256, 64, 4)), KernelConfig.auto());
        assertThat(label).matches(JAVA + ": F32,F16");
    }

    @Test
    void nativeTypesAreNamedWithTheNativeKernelsWhereTheyLoadAndTheRestWithJavas() {
        String label = KernelUse.describe(List.of(matrix(GgmlType.Q8_0, 256, 64), experts(GgmlType.Q6_K, 256, 64, 4),
                matrix(GgmlType.Q4_K, 256, 64), matrix(GgmlType.F32, 64, 8), vector(GgmlType.F32)), KernelConfig.auto());
        if (NativeKernels.best().isPresent()) { // the host decides: the library built and a CPU that runs one of its units
            assertThat(label).matches("native-(avx2|avx512-vnni): Q8_0,Q4_K,Q6_K; " + JAVA + ": F32");
        } else {
            assertThat(label).matches(JAVA + ": F32,Q8_0,Q4_K,Q6_K");
        }
    }

    private static GgufTensorInfo matrix(GgmlType type, int cols, int rows) {
        return new GgufTensorInfo("m", type, new long[] {cols, rows}, 0, 0);
    }

    private static GgufTensorInfo experts(GgmlType type, int cols, int rows, int count) {
        return new GgufTensorInfo("e", type, new long[] {cols, rows, count}, 0, 0);
    }

    private static GgufTensorInfo vector(GgmlType type) {
        return new GgufTensorInfo("norm", type, new long[] {64}, 0, 0);
    }
}
