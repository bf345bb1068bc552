package dev.lazarus.kt.quant.q8_0;

import static jdk.incubator.vector.VectorOperators.ASHR;
import static jdk.incubator.vector.VectorOperators.I2F;
import static jdk.incubator.vector.VectorOperators.LSHL;

import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.ActivationForm;
import dev.lazarus.kt.tensor.GgmlSums;
import dev.lazarus.kt.tensor.Layouts;
import dev.lazarus.kt.tensor.RowKernel;
import dev.lazarus.kt.tensor.Simd;
import dev.lazarus.kt.tensor.VecDotType;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * Q8_0 rows in ggml's AVX2 order ({@code LegacyQuantKernels#ggmlOrder}, which states it one value at a
 * time), vectorized without changing a single rounding. Lane k of a block is the integer dot of values
 * 4k..4k+3: read as little-endian ints, the block's 32 quants are exactly those eight groups of four, one
 * per int lane, so shifting out byte j of every lane gives value 4k + j in lane k; the activation keeps its
 * quants in the same order ({@link #ACTIVATION_ORDER}). Products and their four-term sums are exact in f32
 * (|Σ| ≤ 4·128·127 &lt; 2^24), so only the float steps must keep ggml's order, and they do: one
 * {@code fma(d_w·d_x, lane, acc)} per block and lane, {@link GgmlSums#hsum8} at the end.
 *
 * <p>No vector crosses a call here (each method states its vector steps itself, as {@code Q6KKernel} (bench sources) does): C2
 * boxes a vector that a helper it did not inline takes or returns, at every call, and whether it inlines one is
 * not this class's to decide. It did not, in a JVM that had run a Q4_K model first: the 512-bit vectors of those
 * kernels reach the JDK's shared Vector API call sites ({@code FloatVector.fma}, {@code IntVector.lanewise}), C2
 * then inlines those for both shapes and the four-activation method (22,500 nodes even alone) passed the 18,000 at
 * which C2 stops inlining anything but the JDK's own methods ({@code NodeCountInliningCutoff}), cutting off the
 * lane helper inside the loop: prefill 4-7x slower. A helper C2 had compiled on its own first (the decode kernel's
 * quant unpacking, called from C1 code while the callers warmed up) was also refused later as "already compiled into
 * a big method": decode at 2 tok/s. Four activations go as two pairs (about 16,000 nodes with both shapes seen).
 * See docs/benchmarks.md#kernel-findings ("JIT independence") and
 * {@code KernelInliningTest}.
 */
public final class Q8_0Kernel implements RowKernel {

    public static final Q8_0Kernel INSTANCE = new Q8_0Kernel();

    /** The Q8_0 quants, each block in ggml's lane order: value {@code 4k + j} at {@code 8j + k}. */
    static final ActivationForm<float[]> ACTIVATION_ORDER = new ActivationForm<>(VecDotType.Q8_0) {
        @Override
        protected float[] allocate(int capacity) {
            return new float[capacity];
        }

        @Override
        protected void write(Activation x, int b, float[] into) {
            for (int i = 0; i < 32; i++) {
                into[32 * b + 8 * (i & 3) + (i >> 2)] = x.values[32 * b + i];
            }
        }
    };

    private static final VectorSpecies<Integer> I8 = IntVector.SPECIES_256;
    private static final VectorSpecies<Float> F8 = FloatVector.SPECIES_256;

    private Q8_0Kernel() {
    }

    @Override
    public float dot(MemorySegment w, long o, Activation x, int n) {
        float[] xs = x.form(ACTIVATION_ORDER);
        FloatVector acc = FloatVector.zero(F8);
        for (int b = 0; b < n / 32; b++) {
            long blk = o + 34L * b;
            // byte j of every int lane, sign-extended, as floats: value 4k + j of the block in lane k
            IntVector p = IntVector.fromMemorySegment(I8, w, blk + 2, Simd.LE);
            FloatVector q0 = (FloatVector) p.lanewise(LSHL, 24).lanewise(ASHR, 24).convert(I2F, 0);
            FloatVector q1 = (FloatVector) p.lanewise(LSHL, 16).lanewise(ASHR, 24).convert(I2F, 0);
            FloatVector q2 = (FloatVector) p.lanewise(LSHL, 8).lanewise(ASHR, 24).convert(I2F, 0);
            FloatVector q3 = (FloatVector) p.lanewise(ASHR, 24).convert(I2F, 0);
            // the eight exact lane sums
            int at = 32 * b;
            FloatVector l = q0.mul(FloatVector.fromArray(F8, xs, at));
            l = q1.fma(FloatVector.fromArray(F8, xs, at + 8), l);
            l = q2.fma(FloatVector.fromArray(F8, xs, at + 16), l);
            l = q3.fma(FloatVector.fromArray(F8, xs, at + 24), l);
            acc = FloatVector.broadcast(F8, Layouts.f16(w, blk) * x.scales[b]).fma(l, acc);
        }
        // + 0f: ggml adds its (here zero) affine term, which turns a -0 sum into +0
        return GgmlSums.hsum8(acc.lane(0), acc.lane(1), acc.lane(2), acc.lane(3),
                acc.lane(4), acc.lane(5), acc.lane(6), acc.lane(7)) + 0f;
    }

    /**
     * Four activations against one row, every product exactly {@link #dot}: two {@link #pair}s, each block's quants
     * unpacked once per pair.
     */
    @Override
    public void dotVectors4(MemorySegment w, long o, Activation[] xs, int from, int n, float[][] outs, int row) {
        pair(w, o, xs[from], xs[from + 1], n, outs[from], outs[from + 1], row);
        pair(w, o, xs[from + 2], xs[from + 3], n, outs[from + 2], outs[from + 3], row);
    }

    /** outX[row], outY[row] = {@link #dot} of the row at {@code o} with x and with y: its steps, twice. */
    private static void pair(MemorySegment w, long o, Activation x, Activation y, int n, float[] outX, float[] outY,
                             int row) {
        float[] xs = x.form(ACTIVATION_ORDER), ys = y.form(ACTIVATION_ORDER);
        FloatVector accX = FloatVector.zero(F8), accY = accX;
        for (int b = 0; b < n / 32; b++) {
            long blk = o + 34L * b;
            IntVector p = IntVector.fromMemorySegment(I8, w, blk + 2, Simd.LE);
            FloatVector q0 = (FloatVector) p.lanewise(LSHL, 24).lanewise(ASHR, 24).convert(I2F, 0);
            FloatVector q1 = (FloatVector) p.lanewise(LSHL, 16).lanewise(ASHR, 24).convert(I2F, 0);
            FloatVector q2 = (FloatVector) p.lanewise(LSHL, 8).lanewise(ASHR, 24).convert(I2F, 0);
            FloatVector q3 = (FloatVector) p.lanewise(ASHR, 24).convert(I2F, 0);
            int at = 32 * b;
            FloatVector lx = q0.mul(FloatVector.fromArray(F8, xs, at));
            lx = q1.fma(FloatVector.fromArray(F8, xs, at + 8), lx);
            lx = q2.fma(FloatVector.fromArray(F8, xs, at + 16), lx);
            lx = q3.fma(FloatVector.fromArray(F8, xs, at + 24), lx);
            FloatVector ly = q0.mul(FloatVector.fromArray(F8, ys, at));
            ly = q1.fma(FloatVector.fromArray(F8, ys, at + 8), ly);
            ly = q2.fma(FloatVector.fromArray(F8, ys, at + 16), ly);
            ly = q3.fma(FloatVector.fromArray(F8, ys, at + 24), ly);
            float dw = Layouts.f16(w, blk);
            accX = FloatVector.broadcast(F8, dw * x.scales[b]).fma(lx, accX);
            accY = FloatVector.broadcast(F8, dw * y.scales[b]).fma(ly, accY);
        }
        outX[row] = GgmlSums.hsum8(accX.lane(0), accX.lane(1), accX.lane(2), accX.lane(3),
                accX.lane(4), accX.lane(5), accX.lane(6), accX.lane(7)) + 0f;
        outY[row] = GgmlSums.hsum8(accY.lane(0), accY.lane(1), accY.lane(2), accY.lane(3),
                accY.lane(4), accY.lane(5), accY.lane(6), accY.lane(7)) + 0f;
    }
}
