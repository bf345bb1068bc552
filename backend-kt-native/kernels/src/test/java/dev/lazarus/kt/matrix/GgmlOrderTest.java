package dev.lazarus.kt.matrix;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.gguf.GgmlCodec;
import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.tensor.WeightMatrix;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The float kernels add in ggml_vec_dot's association, not sequentially: a row where the order decides
 * what survives rounding tells them apart.
 */
class GgmlOrderTest {

    /**
     * Values 0 and 32 are ±2^27 and the other 62 are ones. Sequentially the ones between them vanish into
     * 2^27 (its ulp is 16) and the sum is 31; ggml puts them in accumulators 0 and 2 of lane 0, which
     * cancel when combined before any one is added, so every one survives: 62.
     */
    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"F32", "F16"})
    void cancellingValuesMeetFirstAsInGgml(GgmlType type) {
        float[] w = new float[64];
        java.util.Arrays.fill(w, 1f);
        w[0] = 0x1p27f;
        w[32] = -0x1p27f;
        if (type == GgmlType.F16) { // 2^27 is past f16's range: scale the test down (ulp of 2^14 in f32 stays 2^-9)
            w[0] = 0x1p14f;
            w[32] = -0x1p14f;
            java.util.Arrays.fill(w, 1, 32, 0x1p-11f);
            java.util.Arrays.fill(w, 33, 64, 0x1p-11f);
        }
        float[] x = new float[64];
        java.util.Arrays.fill(x, 1f);
        WeightMatrix m = WeightMatrices.defaults().of(type, MemorySegment.ofArray(GgmlCodec.encode(type, w)), 1, 64);
        float[] out = new float[1];
        m.matvec(x, out, 0, 1);
        float one = type == GgmlType.F32 ? 1f : 0x1p-11f;
        assertThat(out[0]).isEqualTo(62 * one);
    }
}
