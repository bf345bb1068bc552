package dev.lazarus.kt.model;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.model.FlashAttentionKernel.Path;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;

/**
 * The flash-attention orders against one-step-at-a-time statements of ggml's {@code one_chunk}, and the properties
 * of its three paths the parity suites rely on (GreedyParityTest, HiddenStateParityTest hold them against
 * llama-server {@code -fa on}).
 */
class FlashAttentionKernelTest {

    @ParameterizedTest
    @CsvSource({"64, 1", "64, 17", "128, 70", "8, 33", "160, 40"})
    void theRowOrderIsGgmlsOneChunkStepForStep(int dim, int positions) {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        float[] q = gaussians(rnd, dim, 1f);
        float[] keys = f16s(rnd, positions * dim);
        float[] values = f16s(rnd, positions * dim);
        float[] out = attend(q, keys, values, dim, 0, positions, Float.NEGATIVE_INFINITY, Path.ROW, 1);
        assertThat(out).as("seed=%dL", seed).isEqualTo(oneChunk(q, keys, values, dim, positions));
    }

    /**
     * The one-row and split orders accumulate V in F16, so the average of ones drifts from 1 by the F16 rounding of the
     * window's 100 updates: over seeds 1 to 3000 at most 4.2e-3 (one-row) and 2.3e-3 (split), against 6e-7 for the
     * tiled order's F32 accumulation. Fixed seeds keep the run repeatable; the bounds leave room for other seeds.
     */
    @ParameterizedTest
    @EnumSource(Path.class)
    void positionsBeforeASlidingWindowDoNotMatterAndASinkLowersTheOutput(Path path) {
        for (long seed = 1; seed <= 32; seed++) {
            positionsBeforeASlidingWindowDoNotMatterAndASinkLowersTheOutput(path, seed);
        }
    }

    private static void positionsBeforeASlidingWindowDoNotMatterAndASinkLowersTheOutput(Path path, long seed) {
        Random rnd = new Random(seed);
        int dim = 64, positions = 300, first = 200;
        float[] q = gaussians(rnd, dim, 1f);
        float[] keys = f16s(rnd, positions * dim);
        float[] values = f16s(rnd, positions * dim);
        float[] windowed = attend(q, keys, values, dim, first, positions, Float.NEGATIVE_INFINITY, path, 2);
        float[] otherKeys = keys.clone(), otherValues = values.clone();
        for (int i = 0; i < first * dim; i++) {
            otherKeys[i] = -otherKeys[i];
            otherValues[i] = 7f;
        }
        assertThat(attend(q, otherKeys, otherValues, dim, first, positions, Float.NEGATIVE_INFINITY, path, 2))
                .as("seed=%dL", seed).isEqualTo(windowed);
        float[] ones = new float[positions * dim];
        java.util.Arrays.fill(ones, 1f);
        float withoutSink = attend(q, keys, ones, dim, first, positions, Float.NEGATIVE_INFINITY, path, 2)[0];
        float withSink = attend(q, keys, ones, dim, first, positions, 3f, path, 2)[0];
        float drift = path == Path.TILED ? 1e-5f : 1e-2f;
        assertThat(withoutSink).as("seed=%dL", seed).isCloseTo(1f, org.assertj.core.api.Assertions.within(drift));
        assertThat(withSink).as("seed=%dL", seed).isLessThan(withoutSink);
    }

    @ParameterizedTest
    @CsvSource({"64, 64, 0", "128, 128, 0", "72, 40, 70", "8, 8, 0", "80, 96, 33"})
    void aBlockOfTiledRowsIsGgmlsTiledOrderRowByRow(int dim, int vDim, int window) {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        int kStride = dim + 3, vStride = vDim + 5, cells = 300;
        float[] keys = f16s(rnd, cells * kStride), values = f16s(rnd, cells * vStride);
        FlashKv.FloatRows kv = new FlashKv.FloatRows(F16LanesTest.bits(keys), 2, kStride, F16LanesTest.bits(values), 4,
                vStride);
        // nine rows (four, four and one through the kernels): three tokens of three heads, one with a sink
        int[] positions = {130, 131, 300, 1, 64, 65, 129, 200, 7};
        FlashTiles.Rows rows = new FlashTiles.Rows();
        float[][] qs = new float[positions.length][], outs = new float[positions.length][];
        for (int r = 0; r < positions.length; r++) {
            qs[r] = gaussians(rnd, dim + 1, 2f);
            outs[r] = new float[vDim + 2];
            int first = window == 0 ? 0 : Math.max(0, positions[r] - window);
            rows.add(qs[r], 1, first, positions[r], null, r == 4 ? 1.5f : Float.NEGATIVE_INFINITY, outs[r], 2);
        }
        FlashTiles.attend(kv, dim, vDim, 0.125f, rows);
        for (int r = 0; r < positions.length; r++) {
            float[] expected = tiledRow(qs[r], 1, dim, vDim, kv, rows.first[r], positions[r], 0.125f, rows.sink[r]);
            for (int d = 0; d < vDim; d++) {
                assertThat(Float.floatToRawIntBits(outs[r][2 + d])).as("seed=%dL row %d value %d", seed, r, d)
                        .isEqualTo(Float.floatToRawIntBits(expected[d]));
            }
        }
    }

    /**
     * ggml's flash_attn_ext_tiled for one query row, one operation at a time: each score one fma chain from 0 in
     * dimension order (simd_gemm), scaled; per tile of 64 positions the maximum, the rescale by expf(old - new),
     * ggml_v_expf over the tile summed 16 lanes at a time in double; V added by an fma per position in order.
     */
    private static float[] tiledRow(float[] q, int qOff, int dim, int vDim, FlashKv.FloatRows kv, int first,
                                    int positions, float scale, float sink) {
        float[] acc = new float[vDim], kq = new float[FlashAttentionKernel.TILE];
        float max = Float.NEGATIVE_INFINITY, sum = 0f;
        for (int ic = first / 64 * 64; ic < positions; ic += 64) {
            int lo = Math.max(first, ic), hi = Math.min(ic + 64, positions);
            java.util.Arrays.fill(kq, Float.NEGATIVE_INFINITY);
            for (int t = lo; t < hi; t++) {
                kq[t - ic] = fmaChain(q, qOff, F16LanesTest.floats(kv.keys()), t * kv.kStride() + kv.kOff(), dim) * scale;
            }
            float tileMax = Float.NEGATIVE_INFINITY;
            for (float x : kq) {
                tileMax = Math.max(tileMax, x);
            }
            float newMax = Math.max(max, tileMax);
            if (newMax > max) {
                float ms = Libm.exp(max - newMax);
                for (int d = 0; d < vDim; d++) {
                    acc[d] *= ms;
                }
                sum *= ms;
            }
            max = newMax;
            double tileSum = 0;
            for (int c = 0; c < 64; c += 16) {
                float[] e = new float[16];
                for (int l = 0; l < 16; l++) {
                    kq[c + l] = e[l] = GgmlExp.vexp(kq[c + l] - newMax);
                }
                tileSum += dev.lazarus.kt.tensor.GgmlSums.reduce16(e, 0);
            }
            sum = (float) (sum + tileSum);
            for (int t = lo; t < hi; t++) {
                for (int d = 0; d < vDim; d++) {
                    acc[d] = Math.fma(Float.float16ToFloat(kv.values()[t * kv.vStride() + kv.vOff() + d]), kq[t - ic], acc[d]);
                }
            }
        }
        if (sink != Float.NEGATIVE_INFINITY) {
            if (sink > max) {
                float ms = Libm.exp(max - sink);
                for (int d = 0; d < vDim; d++) {
                    acc[d] *= ms;
                }
                sum = Math.fma(sum, ms, 1f);
            } else {
                sum = Math.fma(sum, 1f, Libm.exp(sink - max));
            }
        }
        float inverse = sum == 0 ? 0f : 1f / sum;
        for (int d = 0; d < vDim; d++) {
            acc[d] *= inverse;
        }
        return acc;
    }

    /** simd_gemm's product of one query row with one key, as ggml runs it: one fma chain from 0 in dimension order. */
    private static float fmaChain(float[] q, int qOff, float[] k, int kOff, int dim) {
        float acc = 0f;
        for (int i = 0; i < dim; i++) {
            acc = Math.fma(q[qOff + i], k[kOff + i], acc);
        }
        return acc;
    }

    @Test
    void aSplitOnOneThreadIsTheRowOrderAndOnTwoItIsAnother() {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        int dim = 64, positions = 400;
        float[] q = gaussians(rnd, dim, 3f);
        float[] keys = f16s(rnd, positions * dim);
        float[] values = f16s(rnd, positions * dim);
        float[] row = attend(q, keys, values, dim, 0, positions, 0.5f, Path.ROW, 1);
        assertThat(attend(q, keys, values, dim, 0, positions, 0.5f, Path.SPLIT, 1)).as("seed=%dL", seed).isEqualTo(row);
        // two chunks of 256 cells: the F16 accumulator restarts at cell 256, the merge rounds once more
        assertThat(attend(q, keys, values, dim, 0, positions, 0.5f, Path.SPLIT, 2)).as("seed=%dL", seed).isNotEqualTo(row);
        // and the tiled F32 order differs from both
        assertThat(attend(q, keys, values, dim, 0, positions, 0.5f, Path.TILED, 1)).as("seed=%dL", seed).isNotEqualTo(row);
    }

    /**
     * The native F16 value accumulation (AVX-512 hosts) against the Vector API loop: rows of 8 to 136 values (masked
     * tails), weights over many magnitudes so that sums reach F16's subnormals and overflow, rescales among them.
     */
    @ParameterizedTest
    @CsvSource({"8", "16", "24", "64", "128", "136"})
    void theNativeValueAccumulationRoundsAsTheJavaOne(int n) {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        int positions = 300, stride = n + 8, count = 200;
        short[] v = F16LanesTest.bits(f16s(rnd, positions * stride));
        int[] kept = new int[count];
        float[] rescale = new float[count], weight = new float[count];
        for (int k = 0; k < count; k++) {
            kept[k] = rnd.nextInt(positions);
            rescale[k] = rnd.nextInt(4) == 0 ? (float) Math.exp(-rnd.nextDouble() * 20) : 1f;
            weight[k] = (float) Math.pow(2, rnd.nextInt(40) - 30) * rnd.nextFloat() * (k == 150 ? 1e5f : 1f);
        }
        float[] ours = f16s(rnd, n), java = ours.clone();
        boolean native_ = dev.lazarus.kt.tensor.NativeKernels.flashMadF16(ours, v, 3, stride, n, kept, rescale, weight,
                count);
        FlashAttentionKernel.madF16Java(java, v, 3, stride, n, kept, rescale, weight, count);
        assertThat(native_).as("native kernels on an AVX-512 host")
                .isEqualTo(dev.lazarus.kt.tensor.NativeKernels.best().isPresent()
                        && dev.lazarus.kt.host.HostCpu.flags().contains("avx512f"));
        if (native_) {
            for (int d = 0; d < n; d++) {
                assertThat(Float.floatToRawIntBits(ours[d])).as("seed=%dL d=%d", seed, d)
                        .isEqualTo(Float.floatToRawIntBits(java[d]));
            }
        }
    }

    @Test
    void sixteenLanesRoundToF16AsTheScalarConversionDoes() {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        float[] x = new float[16 * 4096];
        for (int i = 0; i < x.length; i++) {
            // every magnitude from F16's subnormals to past its largest value, ties included
            x[i] = switch (i % 4) {
                case 0 -> (float) (rnd.nextGaussian() * Math.pow(2, rnd.nextInt(44) - 28));
                case 1 -> Float.float16ToFloat((short) rnd.nextInt(0x7C00)) * (rnd.nextBoolean() ? 1 : -1);
                case 2 -> Float.float16ToFloat((short) rnd.nextInt(0x7C00)) * (1 + rnd.nextFloat() * 0x1p-10f);
                default -> (Float.float16ToFloat((short) rnd.nextInt(0x7BFF)) + Float.float16ToFloat((short) (rnd.nextInt(0x7BFF) + 1))) / 2;
            };
        }
        x[0] = 65504f;
        x[1] = 65519.99f;
        x[2] = 65520f;
        x[3] = -0f;
        x[4] = 0x1p-25f;
        x[5] = 0x1.8p-24f;
        x[6] = 0x1.ffcp-15f;
        float[] rounded = new float[x.length];
        for (int i = 0; i < x.length; i += 16) {
            FlashAttentionKernel.roundToF16(jdk.incubator.vector.FloatVector.fromArray(jdk.incubator.vector.FloatVector.SPECIES_512, x, i))
                    .intoArray(rounded, i);
        }
        for (int i = 0; i < x.length; i++) {
            assertThat(Float.floatToRawIntBits(rounded[i])).as("seed=%dL x=%s", seed, x[i])
                    .isEqualTo(Float.floatToRawIntBits(Numerics.roundToF16(x[i])));
        }
    }

    @Test
    void ggmlPicksItsOrderByTheUbatchAndTheCells() {
        assertThat(FlashAttentionKernel.path(1, 256, true)).isEqualTo(Path.ROW);
        assertThat(FlashAttentionKernel.path(1, 257, true)).as("512 cells").isEqualTo(Path.SPLIT);
        assertThat(FlashAttentionKernel.path(1, 257, false)).as("a quantized cache").isEqualTo(Path.ROW);
        assertThat(FlashAttentionKernel.path(63, 300, true)).isEqualTo(Path.ROW);
        assertThat(FlashAttentionKernel.path(64, 64, true)).isEqualTo(Path.TILED);
        assertThat(FlashAttentionKernel.path(64, 64, false)).isEqualTo(Path.ROW);
    }

    private static float[] attend(float[] q, float[] keys, float[] values, int dim, int first, int positions,
                                  float sink, Path path, int threads) {
        float[] out = new float[dim];
        FlashAttentionKernel.attend(q, 0, dim, FlashKv.f16(F16LanesTest.bits(keys), 0, dim, F16LanesTest.bits(values), 0,
                dim, dim), first, positions,
                0.125f, sink, path, threads, out, 0);
        return out;
    }

    /** ggml's one_chunk for F16 K and V, one operation at a time. */
    private static float[] oneChunk(float[] q, float[] keys, float[] values, int dim, int positions) {
        float[] qh = new float[dim];
        for (int i = 0; i < dim; i++) {
            qh[i] = Numerics.roundToF16(q[i]);
        }
        float[] acc = new float[dim];
        float max = Float.NEGATIVE_INFINITY, sum = 0;
        for (int t = 0; t < positions; t++) {
            float s = AttentionKernel.keyDot(qh, F16LanesTest.bits(keys), t * dim, dim) * 0.125f;
            float ms = 1, vs = 1;
            if (s > max) {
                ms = Libm.exp(max - s);
                max = s;
                for (int d = 0; d < dim; d++) {
                    acc[d] = Numerics.roundToF16(acc[d] * ms);
                }
            } else {
                vs = Libm.exp(s - max);
            }
            for (int d = 0; d < dim; d++) {
                acc[d] = Numerics.roundToF16(Math.fma(values[t * dim + d], vs, acc[d]));
            }
            sum = Math.fma(sum, ms, vs);
        }
        float inverse = 1f / sum;
        for (int d = 0; d < dim; d++) {
            acc[d] *= inverse;
        }
        return acc;
    }

    private static float[] gaussians(Random rnd, int n, float scale) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = (float) rnd.nextGaussian() * scale;
        }
        return v;
    }

    private static float[] f16s(Random rnd, int n) {
        float[] v = gaussians(rnd, n, 1f);
        Numerics.roundToF16(v, 0, n);
        return v;
    }
}
