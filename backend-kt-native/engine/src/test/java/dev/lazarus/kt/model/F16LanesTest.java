package dev.lazarus.kt.model;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The F16 cache's 16-lane widening against the scalar conversion, for every F16 value. */
class F16LanesTest {

    @Test
    void sixteenLanesWidenEveryF16ValueAsTheScalarConversionDoes() {
        short[] all = new short[1 << 16];
        for (int i = 0; i < all.length; i++) {
            all[i] = (short) i;
        }
        float[] widened = new float[all.length];
        for (int i = 0; i < all.length; i += 16) {
            F16Lanes.load(all, i).intoArray(widened, i);
        }
        for (int i = 0; i < all.length; i++) {
            float expected = Float.float16ToFloat(all[i]);
            assertThat(Float.floatToRawIntBits(widened[i])).as("F16 bits %04x (%s)", i, expected)
                    .isEqualTo(Float.floatToRawIntBits(expected));
            assertThat(Float.floatToRawIntBits(F16Lanes.get(all, i))).isEqualTo(Float.floatToRawIntBits(expected));
        }
    }

    @Test
    void anF16CacheHoldsTwoBytesAValueAndReadsBackWhatItRoundedTo() {
        KvLayout layout = new KvLayout(new int[] {64, 64}, new int[] {64, 64}, new int[] {0, 0});
        KvCache cache = new KvCache(layout, KvCacheTypes.F16, 100);
        float[] k = new float[64], v = new float[64];
        for (int i = 0; i < 64; i++) {
            k[i] = 1f / (i + 3);
            v[i] = -70000f + i * 2000f;
        }
        cache.ensureCapacity(100);
        cache.store(1, 99, k, 0, v, 0);
        float[] back = new float[64];
        cache.valueRows(1).read(99, 0, 64, back, 0);
        for (int i = 0; i < 64; i++) {
            assertThat(F16Lanes.get(cache.keys(1), 99 * 64 + i)).isEqualTo(Numerics.roundToF16(k[i]));
            assertThat(back[i]).isEqualTo(Numerics.roundToF16(v[i]));
        }
        assertThat(cache.bytes()).as("2 blocks, keys and values, 100 positions of 64").isEqualTo(2L * 2 * 100 * 64 * 2);
    }

    /** F16-rounded floats as their F16 bits. */
    static short[] bits(float[] x) {
        short[] h = new short[x.length];
        for (int i = 0; i < x.length; i++) {
            h[i] = Float.floatToFloat16(x[i]);
        }
        return h;
    }

    /** F16 bits widened. */
    static float[] floats(short[] h) {
        float[] x = new float[h.length];
        for (int i = 0; i < h.length; i++) {
            x[i] = Float.float16ToFloat(h[i]);
        }
        return x;
    }
}
