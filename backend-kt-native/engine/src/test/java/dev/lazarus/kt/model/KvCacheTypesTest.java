package dev.lazarus.kt.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The cache types' names, sizes and storage, and llama.cpp's attention rotation that quantised ones take. */
class KvCacheTypesTest {

    @Test
    void namesAreLlamaServers() {
        assertThat(KvCacheType.parse("q8_0")).isEqualTo(KvCacheType.Q8_0);
        assertThat(KvCacheType.parse("IQ4_NL")).isEqualTo(KvCacheType.IQ4_NL);
        assertThat(KvCacheType.names()).isEqualTo("f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1");
        assertThatThrownBy(() -> KvCacheType.parse("q2_k")).hasMessageContaining("q2_k").hasMessageContaining("q8_0");
        assertThat(KvCacheType.BF16.quantized()).isFalse();
        assertThat(KvCacheType.Q5_1.quantized()).isTrue();
    }

    /** Bytes per token: a block's bytes per 32 values (F16 64, Q8_0 34, Q4_0 18, ...) over each block's K and V widths. */
    @Test
    void bytesPerTokenAreGgmlsRowSizes() {
        KvLayout layout = new KvLayout(new int[] {128, 128}, new int[] {128, 0});
        assertThat(layout.f16BytesPerPosition()).isEqualTo(2 * (128 + 128 + 128));
        assertThat(layout.bytesPerPosition(new KvCacheTypes(KvCacheType.Q8_0, KvCacheType.Q8_0))).isEqualTo(3 * 4 * 34);
        assertThat(layout.bytesPerPosition(new KvCacheTypes(KvCacheType.Q4_0, KvCacheType.F16))).isEqualTo(2 * 4 * 18 + 256);
        assertThat(layout.bytesPerPosition(new KvCacheTypes(KvCacheType.Q5_1, KvCacheType.BF16))).isEqualTo(2 * 4 * 24 + 256);
        assertThat(layout.bytesPerPosition(new KvCacheTypes(KvCacheType.IQ4_NL, KvCacheType.Q4_1))).isEqualTo(2 * 4 * 18 + 4 * 20);
    }

    @Test
    void aQuantisedCacheStoresGgmlBlocksAndReadsThemBack() {
        KvCache cache = new KvCache(new KvLayout(new int[] {64}, new int[] {64}),
                new KvCacheTypes(KvCacheType.Q8_0, KvCacheType.BF16), 100);
        float[] k = new float[64];
        float[] v = new float[64];
        for (int i = 0; i < 64; i++) {
            k[i] = i - 32;        // first block: amax 32, d = 32/127, quants round(x·127/32)
            v[i] = 1f + i / 1024f; // bf16 keeps 8 bits of mantissa
        }
        cache.ensureCapacity(70);
        cache.store(0, 69, k, 0, v, 0);
        KvRows keys = cache.keyRows(0);
        assertThat(keys.rowBytes()).isEqualTo(68);
        float[] back = new float[64];
        keys.read(69, 0, 64, back, 0);
        float d = Float.float16ToFloat(Float.floatToFloat16(32f / 127f));
        assertThat(back[0]).isEqualTo(d * -127);
        float d1 = Float.float16ToFloat(Float.floatToFloat16(31f / 127f)); // the second block's amax is 31
        assertThat(back[33]).isEqualTo(d1 * 4);                             // 1 · 127/31 = 4.1 rounds to 4
        cache.valueRows(0).read(69, 0, 64, back, 0);
        assertThat(back[3]).isEqualTo(1f);          // 1 + 3/1024 rounds to 1 in bf16
        assertThat(back[8]).isEqualTo(1f + 8 / 1024f); // 1 + 2^-7 is a bf16
        assertThat(cache.bytes()).isEqualTo(100L * (68 + 128)); // grown to the maximum, 100 positions
        assertThatThrownBy(() -> cache.keys(0)).hasMessageContaining("q8_0");
    }

    @Test
    void rotationIsWalshHadamardsOwnInverse() {
        float[] x = new float[128];
        x[0] = 1f;
        KvRotation.rotate(x, 0, 128, 64);
        for (int i = 0; i < 64; i++) {
            assertThat(x[i]).isEqualTo(0.125f); // the first column of H/8: all 1/sqrt(64)
        }
        assertThat(x[64]).isZero();
        x[70] = 3f;
        float[] before = x.clone();
        KvRotation.rotate(x, 0, 128, 64);
        KvRotation.rotate(x, 0, 128, 64);
        assertThat(x).containsExactly(before); // exact here: the values are sums of powers of two
        assertThat(KvRotation.keyChunk(KvCacheType.Q8_0, 192)).isEqualTo(64);
        assertThat(KvRotation.keyChunk(KvCacheType.Q8_0, 256)).isEqualTo(256);
        assertThat(KvRotation.keyChunk(KvCacheType.BF16, 128)).isZero();
        assertThat(KvRotation.keyChunk(KvCacheType.Q4_0, 96)).isZero();
        assertThat(KvRotation.valueChunk(KvCacheType.Q4_0, 128)).isEqualTo(64);
    }
}
