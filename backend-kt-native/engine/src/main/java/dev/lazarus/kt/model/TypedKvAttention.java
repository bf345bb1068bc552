package dev.lazarus.kt.model;

import dev.lazarus.kt.gguf.GgmlCodec;
import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.matrix.RowDot;
import dev.lazarus.kt.tensor.VecDotType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.Map;

/**
 * {@link AttentionKernel}'s non-flash order (llama-server {@code -fa off}) over a KV cache of other types than F16
 * keys and values. Both products stay ggml matrix multiplications: K·Q converts the query to K's
 * {@code vec_dot_type} (F16, BF16, Q8_0 or Q8_1, as {@code mul_mat} does) and takes K's {@code vec_dot} per
 * position ({@link RowDot}, on ggml's blocks); the probabilities are converted to V's type and dotted with each
 * column of the (transposed) values. llama.cpp stores V transposed without flash attention, which only F16 and BF16
 * allow: a quantised V needs flash attention there (it refuses to load otherwise), so it is refused here too.
 */
final class TypedKvAttention {

    /** ggml's BF16 vec_dot steps: the padding of a column to a multiple of 64 positions only adds exact zeros. */
    private static final int BF16_STEP = 64;

    private static final ValueLayout.OfShort LE16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    private static final class Scratch {
        float[] query = new float[0], scores = new float[0], column = new float[0];
        byte[] probabilities = new byte[0];
        final Map<VecDotType, Activation> activations = new EnumMap<>(VecDotType.class);

        Activation activation(VecDotType type, int n) {
            Activation a = activations.get(type);
            if (a == null || a.capacity() < n) {
                a = Activation.allocate(type, Math.max(n, a == null ? 0 : 2 * a.capacity()));
                activations.put(type, a);
            }
            return a;
        }

        static float[] atLeast(float[] a, int n) {
            return a.length >= n ? a : new float[Math.max(n, 2 * a.length)];
        }
    }

    private TypedKvAttention() {}

    /** As {@link AttentionKernel#attend}, with keys and values read from their cache rows. */
    static void attend(float[] q, int qOff, int dim, KvRows keys, int kOff, KvRows values, int vOff, int vDim,
                       int first, int positions, float scale, float sink, float[] out, int outOff) {
        Scratch s = SCRATCH.get();
        float[] scores = s.scores = Scratch.atLeast(s.scores, positions);
        keyDots(s, q, qOff, dim, keys, kOff, 0, positions, scores);
        Arrays.fill(scores, 0, first, Float.NEGATIVE_INFINITY);
        Numerics.softmax(scores, positions, scale, sink);
        switch (values.type()) {
            case F16 -> {
                for (int t = 0; t < positions; t++) {
                    scores[t] = Numerics.roundToF16(scores[t]);
                }
                AttentionKernel.valueDots(scores, positions, values.halves(), vOff, values.width(), vDim, out, outOff);
            }
            case BF16 -> bf16Values(s, scores, positions, values, vOff, vDim, out, outOff);
            default -> throw new IllegalStateException(
                    "a " + values.type().settingName() + " V cache needs flash attention (as in llama.cpp)");
        }
    }

    /** {@code scores[t]} = K_t · q in K's vec_dot, for t in [from, to): the query converted to K's vec_dot_type. */
    static void keyDots(float[] q, int qOff, int dim, KvRows keys, int kOff, int from, int to, float[] scores) {
        keyDots(SCRATCH.get(), q, qOff, dim, keys, kOff, from, to, scores);
    }

    private static void keyDots(Scratch s, float[] q, int qOff, int dim, KvRows keys, int kOff, int from, int to,
                                float[] scores) {
        if (keys.type() == KvCacheType.F16) {
            float[] qh = s.query = Scratch.atLeast(s.query, dim);
            for (int i = 0; i < dim; i++) {
                qh[i] = Numerics.roundToF16(q[qOff + i]);
            }
            AttentionKernel.keyDots(qh, dim, keys.halves(), kOff, keys.width(), from, to, scores);
            return;
        }
        RowDot dot = keys.dot();
        float[] qs = s.query = Scratch.atLeast(s.query, dim);
        System.arraycopy(q, qOff, qs, 0, dim);
        Activation x = s.activation(dot.vecDotType(), dim).set(qs, dim);
        MemorySegment rows = keys.segment();
        long at = keys.byteOffset(0, kOff);
        for (int t = from; t < to; t++) {
            scores[t] = dot.dot(rows, at + t * keys.rowBytes(), x, dim);
        }
    }

    /**
     * out[d] = ggml_vec_dot_bf16 of the probabilities (rounded to BF16) with column d of the BF16 values, over the
     * positions padded with zeros to a multiple of {@link #BF16_STEP} (the cells llama-server pads its cache with).
     */
    private static void bf16Values(Scratch s, float[] p, int positions, KvRows values, int vOff, int vDim,
                                   float[] out, int outOff) {
        int padded = (positions + BF16_STEP - 1) / BF16_STEP * BF16_STEP;
        if (s.probabilities.length < 2 * padded) {
            s.probabilities = new byte[2 * Math.max(padded, s.probabilities.length)];
        }
        MemorySegment probabilities = MemorySegment.ofArray(s.probabilities);
        for (int t = 0; t < padded; t++) {
            short bits = t < positions ? GgmlCodec.f32ToBf16(p[t]) : 0;
            probabilities.set(LE16, 2L * t, bits);
        }
        float[] column = s.column = Scratch.atLeast(s.column, padded);
        Arrays.fill(column, positions, padded, 0f);
        RowDot dot = values.dot();
        Activation x = s.activation(VecDotType.BF16, padded);
        MemorySegment rows = values.segment();
        for (int d = 0; d < vDim; d++) {
            long at = values.byteOffset(0, vOff + d);
            for (int t = 0; t < positions; t++) {
                column[t] = GgmlCodec.bf16ToF32(rows.get(LE16,
                        at + t * values.rowBytes()));
            }
            out[outOff + d] = dot.dot(probabilities, 0, x.set(column, padded), padded);
        }
    }
}
