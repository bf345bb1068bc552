package dev.lazarus.kt.tensor;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * ggml's {@code quantize_row_q8_K} for one super-block of 256 values: the value of largest magnitude (the first,
 * on a tie) maps to -127 ({@code iscale = -127 / max}), every value {@code x · iscale} rounds to the nearest
 * integer (ties to even) capped at 127, the scale {@code 1 / iscale} is kept in f32, plus the sum of each 16
 * quants. {@link #quantize} does it in 16-lane vectors (one group of 16 per vector), {@link #quantizeScalar} is
 * the reference it must equal bit for bit; a decode step quantizes about a hundred super-blocks on the thread
 * that the other waits for, so the scalar loops were a few percent of a token.
 */
final class Q8KQuantizer {

    private static final VectorSpecies<Float> F = FloatVector.SPECIES_512;
    private static final VectorSpecies<Integer> I = IntVector.SPECIES_512;
    static final int BLOCK = 256;
    private static final int GROUP = 16;
    /**
     * 1.5 · 2^23: adding it to a float of magnitude below 2^22 rounds it to an integer, ties to even (the unit
     * in the last place is 1 there), which then sits in the low mantissa bits offset by 2^22. This is ggml's
     * {@code nearest_int}, and for these magnitudes the same as {@link Math#rint}.
     */
    private static final float ROUNDER = 12582912f;
    private static final int MANTISSA = 0x007f_ffff, OFFSET = 0x0040_0000;

    private Q8KQuantizer() {}

    /**
     * Quantizes {@code x[o .. o + 256)} into {@code quants[o ..]} (int8 values as floats), {@code bsums[o / 16 ..]}
     * (16 group sums) and {@code scales[o / 256]}. Returns false, writing nothing, for a block of zeros.
     */
    static boolean quantize(float[] x, int o, float[] quants, int[] bsums, float[] scales) {
        FloatVector amaxes = FloatVector.zero(F);
        for (int i = 0; i < BLOCK; i += GROUP) {
            amaxes = amaxes.max(FloatVector.fromArray(F, x, o + i).abs());
        }
        float amax = amaxes.reduceLanes(VectorOperators.MAX);
        // zeros, NaN (which the vector max propagates but the reference skips) and infinities: the reference's way
        if (!(amax > 0) || amax == Float.POSITIVE_INFINITY) {
            return quantizeScalar(x, o, quants, bsums, scales);
        }
        float max = firstOfMagnitude(x, o, amax);
        float iscale = -127f / max;
        if (!Float.isFinite(iscale)) {
            // a subnormal maximum: products overflow, and the reference's casts of infinities decide the quants
            return quantizeScalar(x, o, quants, bsums, scales);
        }
        for (int g = 0; g < BLOCK / GROUP; g++) {
            int at = o + GROUP * g;
            IntVector q = FloatVector.fromArray(F, x, at).mul(iscale).add(ROUNDER).reinterpretAsInts()
                    .and(MANTISSA).sub(OFFSET).min(127);
            ((FloatVector) q.convertShape(VectorOperators.I2F, F, 0)).intoArray(quants, at);
            bsums[at / GROUP] = q.reduceLanes(VectorOperators.ADD);
        }
        scales[o / BLOCK] = 1 / iscale;
        return true;
    }

    /** The first value of {@code x[o .. o + 256)} whose magnitude is {@code amax} (one exists). */
    private static float firstOfMagnitude(float[] x, int o, float amax) {
        for (int i = 0; i < BLOCK; i += GROUP) {
            VectorMask<Float> hit = FloatVector.fromArray(F, x, o + i).abs().eq(amax);
            if (hit.anyTrue()) {
                return x[o + i + hit.firstTrue()];
            }
        }
        throw new AssertionError("no value of magnitude " + amax);
    }

    /** The reference: ggml's loops, value by value; the same contract as {@link #quantize}. */
    static boolean quantizeScalar(float[] x, int o, float[] quants, int[] bsums, float[] scales) {
        float amax = 0, max = 0;
        for (int i = 0; i < BLOCK; i++) {
            float a = Math.abs(x[o + i]);
            if (a > amax) {
                amax = a;
                max = x[o + i];
            }
        }
        if (amax == 0) {
            return false;
        }
        float iscale = -127f / max;
        for (int g = 0; g < BLOCK / GROUP; g++) {
            int sum = 0;
            for (int i = 0; i < GROUP; i++) {
                int q = Math.min(127, (int) Math.rint(iscale * x[o + GROUP * g + i]));
                quants[o + GROUP * g + i] = q;
                sum += q;
            }
            bsums[o / GROUP + g] = sum;
        }
        scales[o / BLOCK] = 1 / iscale;
        return true;
    }
}
