package dev.lazarus.kt.model;

import dev.lazarus.kt.tensor.GgmlSums;
import java.util.Arrays;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * ggml's tiled flash attention ({@link FlashAttentionKernel.Path#TILED}, {@code flash_attn_ext_tiled}) for a block
 * of query rows that share one KV head: ggml's operations per (query, key) pair and per row, computed the way
 * vector lanes want them. Each tile of 64 keys is transposed once for the whole block (ggml packs it the same way),
 * so one vector lane holds one key's score, accumulated by the same fma chain over the head dimension, in the same
 * order, as ggml's {@code simd_gemm}; four query rows share every load. V is added per row by an fma per key in
 * position order (simd_gemm's second product), four rows per loaded V slice, the accumulators in registers across
 * the tile. Keys a row does not attend inside a tile weigh an exact zero, as in ggml's masked tiles.
 */
final class FlashTiles {

    private static final int TILE = FlashAttentionKernel.TILE;
    private static final int LANES = 16;
    private static final VectorSpecies<Float> S16 = FloatVector.SPECIES_512;

    /** Lane indices as floats. */
    private static final FloatVector IOTA = FloatVector.broadcast(S16, 0f).addIndex(1);

    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    /** The query rows of one block; reused between blocks ({@link #clear}). */
    static final class Rows {
        int count;
        float[][] q = new float[4][];
        int[] qOff = new int[4], first = new int[4], positions = new int[4], outOff = new int[4];
        float[][] out = new float[4][];
        boolean[][] keep = new boolean[4][];
        float[] sink = new float[4];

        void clear() {
            count = 0;
        }

        /**
         * Row {@code count}: the query at {@code q[qOff..]} attends [first, positions) (and only {@code keep}, null:
         * all) with an attention {@code sink} ({@code -inf}: none), into {@code out[outOff..]}.
         */
        void add(float[] q, int qOff, int first, int positions, boolean[] keep, float sink, float[] out, int outOff) {
            if (count == this.q.length) {
                int n = 2 * count;
                this.q = Arrays.copyOf(this.q, n);
                this.out = Arrays.copyOf(this.out, n);
                this.keep = Arrays.copyOf(this.keep, n);
                this.qOff = Arrays.copyOf(this.qOff, n);
                this.first = Arrays.copyOf(this.first, n);
                this.positions = Arrays.copyOf(this.positions, n);
                this.outOff = Arrays.copyOf(this.outOff, n);
                this.sink = Arrays.copyOf(this.sink, n);
            }
            this.q[count] = q;
            this.qOff[count] = qOff;
            this.first[count] = first;
            this.positions[count] = positions;
            this.keep[count] = keep;
            this.sink[count] = sink;
            this.out[count] = out;
            this.outOff[count] = outOff;
            count++;
        }
    }

    private static final class Scratch {
        float[] queries = new float[0], keysT = new float[0], valueTile = new float[0], scores = new float[0], acc = new float[0];
        float[] max = new float[0], sum = new float[0];
        int[] active = new int[0];

        void size(int rows, int dim, int vDim) {
            queries = FloatArrays.atLeast(queries, rows * dim);
            keysT = FloatArrays.atLeast(keysT, dim * TILE);
            valueTile = FloatArrays.atLeast(valueTile, TILE * vDim);
            scores = FloatArrays.atLeast(scores, rows * TILE);
            acc = FloatArrays.atLeast(acc, rows * vDim);
            max = FloatArrays.atLeast(max, rows);
            sum = FloatArrays.atLeast(sum, rows);
            if (active.length < rows) {
                active = new int[Math.max(rows, 2 * active.length)];
            }
        }
    }

    /** Grows scratch arrays. */
    private static final class FloatArrays {
        static float[] atLeast(float[] a, int n) {
            return a.length >= n ? a : new float[Math.max(n, 2 * a.length)];
        }
    }

    private FlashTiles() {}

    /** Attention of every row of {@code rows} over {@code kv} (F16 K and V as their bits), into each row's output. */
    static void attend(FlashKv.FloatRows kv, int dim, int vDim, float scale, Rows rows) {
        int n = rows.count;
        if (n == 0) {
            return;
        }
        Scratch s = SCRATCH.get();
        s.size(n, dim, vDim);
        float[] queries = s.queries, keysT = s.keysT, vTile = s.valueTile, kq = s.scores, acc = s.acc, max = s.max, sum = s.sum;
        int[] active = s.active;
        int start = Integer.MAX_VALUE, end = 0;
        for (int r = 0; r < n; r++) {
            System.arraycopy(rows.q[r], rows.qOff[r], queries, r * dim, dim);
            start = Math.min(start, rows.first[r] / TILE * TILE);
            end = Math.max(end, rows.positions[r]);
        }
        Arrays.fill(acc, 0, n * vDim, 0f);
        Arrays.fill(max, 0, n, Float.NEGATIVE_INFINITY);
        Arrays.fill(sum, 0, n, 0f);
        short[] keys = kv.keys(), values = kv.values();
        for (int ic = start; ic < end; ic += TILE) {
            int count = Math.min(TILE, end - ic);
            int live = 0;
            for (int r = 0; r < n; r++) {
                if (Math.max(rows.first[r], ic) < Math.min(ic + TILE, rows.positions[r])) {
                    active[live++] = r;
                }
            }
            if (live == 0) {
                continue;
            }
            transpose(keys, ic * kv.kStride() + kv.kOff(), kv.kStride(), count, dim, keysT);
            int a = 0;
            for (; a + 4 <= live; a += 4) {
                scores4(keysT, dim, queries, active[a] * dim, active[a + 1] * dim, active[a + 2] * dim,
                        active[a + 3] * dim, kq, active[a] * TILE, active[a + 1] * TILE, active[a + 2] * TILE,
                        active[a + 3] * TILE);
            }
            for (; a < live; a++) {
                scores1(keysT, dim, queries, active[a] * dim, kq, active[a] * TILE);
            }
            int weighted = 0;
            for (int i = 0; i < live; i++) {
                int r = active[i];
                if (softmaxTile(kq, r * TILE, ic, rows.first[r], rows.positions[r], rows.keep[r], scale, acc,
                        r * vDim, vDim, max, sum, r)) {
                    active[weighted++] = r;
                }
            }
            if (weighted == 0) {
                continue;
            }
            widen(values, ic * kv.vStride() + kv.vOff(), kv.vStride(), count, vDim, vTile);
            a = 0;
            for (; a + 4 <= weighted; a += 4) {
                addValues4(acc, active[a] * vDim, active[a + 1] * vDim, active[a + 2] * vDim, active[a + 3] * vDim,
                        kq, active[a] * TILE, active[a + 1] * TILE, active[a + 2] * TILE, active[a + 3] * TILE,
                        vTile, 0, vDim, count, vDim);
            }
            for (; a < weighted; a++) {
                addValues1(acc, active[a] * vDim, kq, active[a] * TILE, vTile, 0, vDim, count, vDim);
            }
        }
        for (int r = 0; r < n; r++) {
            float total = sum[r], sink = rows.sink[r];
            int o = r * vDim;
            if (sink != Float.NEGATIVE_INFINITY) {
                if (sink > max[r]) {
                    float ms = Libm.exp(max[r] - sink);
                    scale(acc, o, vDim, ms);
                    total = Math.fma(total, ms, 1f);
                } else {
                    total = Math.fma(total, 1f, Libm.exp(sink - max[r]));
                }
            }
            float inverse = total == 0 ? 0f : 1f / total;
            float[] out = rows.out[r];
            int outOff = rows.outOff[r];
            for (int d = 0; d < vDim; d++) {
                out[outOff + d] = acc[o + d] * inverse;
            }
        }
    }

    /** F16 keys [0, count) from {@code kOff} (every {@code kStride}), widened, into {@code kT[d·64 + t]}; missing keys zero. */
    private static void transpose(short[] k, int kOff, int kStride, int count, int dim, float[] kT) {
        for (int t = 0; t < count; t++) {
            int base = kOff + t * kStride;
            for (int d = 0; d < dim; d++) {
                kT[d * TILE + t] = F16Lanes.get(k, base + d);
            }
        }
        if (count < TILE) {
            for (int d = 0; d < dim; d++) {
                Arrays.fill(kT, d * TILE + count, (d + 1) * TILE, 0f);
            }
        }
    }

    /** F16 values [0, count) from {@code vOff} (every {@code vStride}), widened once per tile, into {@code vT[t·vDim + d]}. */
    private static void widen(short[] v, int vOff, int vStride, int count, int vDim, float[] vT) {
        for (int t = 0; t < count; t++) {
            int from = vOff + t * vStride, to = t * vDim, d = 0;
            for (; d + LANES <= vDim; d += LANES) {
                F16Lanes.load(v, from + d).intoArray(vT, to + d);
            }
            for (; d < vDim; d++) {
                vT[to + d] = F16Lanes.get(v, from + d);
            }
        }
    }

    /**
     * One row's tile of raw scores at {@code kq[o..o+64)}: scaled, the keys it does not attend set to -inf, then
     * ggml's per-row step (the running maximum, the rescale by {@code expf(old - new)}, {@code ggml_v_expf} in 16
     * lanes summed in double). Leaves the weights in place; false when the row attends nothing here.
     */
    private static boolean softmaxTile(float[] kq, int o, int ic, int first, int positions, boolean[] keep,
                                       float scale, float[] acc, int accOff, int vDim, float[] max, float[] sum,
                                       int r) {
        int lo = Math.max(first, ic) - ic, hi = Math.min(ic + TILE, positions) - ic;
        FloatVector tileMaxV = FloatVector.broadcast(S16, Float.NEGATIVE_INFINITY);
        for (int c = 0; c < TILE; c += LANES) {
            FloatVector x = FloatVector.fromArray(S16, kq, o + c).mul(scale);
            if (c < lo || c + LANES > hi) {
                FloatVector t = IOTA.add(c);
                x = x.blend(Float.NEGATIVE_INFINITY, t.compare(VectorOperators.LT, lo).or(t.compare(VectorOperators.GE, hi)));
            }
            if (keep != null) {
                for (int l = 0; l < LANES; l++) {
                    int t = ic + c + l;
                    if (t < keep.length && !keep[t]) {
                        x = x.withLane(l, Float.NEGATIVE_INFINITY);
                    }
                }
            }
            x.intoArray(kq, o + c);
            tileMaxV = tileMaxV.max(x);
        }
        float tileMax = tileMaxV.reduceLanes(VectorOperators.MAX);
        if (tileMax == Float.NEGATIVE_INFINITY) {
            return false;
        }
        float old = max[r];
        float newMax = Math.max(old, tileMax);
        float total = sum[r];
        if (newMax > old) {
            float ms = Libm.exp(old - newMax);
            scale(acc, accOff, vDim, ms);
            total *= ms;
        }
        max[r] = newMax;
        double tileSum = 0;
        for (int c = 0; c < TILE; c += LANES) {
            GgmlExp.vexpMinus16(kq, o + c, newMax);
            tileSum += GgmlSums.reduce16(kq, o + c);
        }
        sum[r] = (float) (total + tileSum);
        return true;
    }

    /** {@code acc[o..o+n) *= v} (ggml_vec_scale_f32). */
    private static void scale(float[] acc, int o, int n, float v) {
        int d = 0;
        for (; d + LANES <= n; d += LANES) {
            FloatVector.fromArray(S16, acc, o + d).mul(v).intoArray(acc, o + d);
        }
        for (; d < n; d++) {
            acc[o + d] *= v;
        }
    }

    /**
     * Four rows' 64 scores (queries at {@code q[qa..]} ..., into {@code kq[ka..ka+64)} ...): lane t of each vector
     * is key t's chain {@code fma(q[d], k_t[d], acc)} from 0 over d in order.
     */
    static void scores4(float[] kT, int dim, float[] q, int qa, int qb, int qc, int qd, float[] kq, int ka, int kb,
                        int kc, int kd) {
        FloatVector z = FloatVector.zero(S16);
        FloatVector a0 = z, a1 = z, a2 = z, a3 = z, b0 = z, b1 = z, b2 = z, b3 = z;
        FloatVector c0 = z, c1 = z, c2 = z, c3 = z, d0 = z, d1 = z, d2 = z, d3 = z;
        for (int d = 0; d < dim; d++) {
            int base = d * TILE;
            FloatVector k0 = FloatVector.fromArray(S16, kT, base), k1 = FloatVector.fromArray(S16, kT, base + 16),
                    k2 = FloatVector.fromArray(S16, kT, base + 32), k3 = FloatVector.fromArray(S16, kT, base + 48);
            FloatVector p = FloatVector.broadcast(S16, q[qa + d]);
            a0 = k0.fma(p, a0);
            a1 = k1.fma(p, a1);
            a2 = k2.fma(p, a2);
            a3 = k3.fma(p, a3);
            p = FloatVector.broadcast(S16, q[qb + d]);
            b0 = k0.fma(p, b0);
            b1 = k1.fma(p, b1);
            b2 = k2.fma(p, b2);
            b3 = k3.fma(p, b3);
            p = FloatVector.broadcast(S16, q[qc + d]);
            c0 = k0.fma(p, c0);
            c1 = k1.fma(p, c1);
            c2 = k2.fma(p, c2);
            c3 = k3.fma(p, c3);
            p = FloatVector.broadcast(S16, q[qd + d]);
            d0 = k0.fma(p, d0);
            d1 = k1.fma(p, d1);
            d2 = k2.fma(p, d2);
            d3 = k3.fma(p, d3);
        }
        store(kq, ka, a0, a1, a2, a3);
        store(kq, kb, b0, b1, b2, b3);
        store(kq, kc, c0, c1, c2, c3);
        store(kq, kd, d0, d1, d2, d3);
    }

    /** One row's 64 scores, as {@link #scores4}. */
    static void scores1(float[] kT, int dim, float[] q, int qa, float[] kq, int ka) {
        FloatVector z = FloatVector.zero(S16);
        FloatVector a0 = z, a1 = z, a2 = z, a3 = z;
        for (int d = 0; d < dim; d++) {
            int base = d * TILE;
            FloatVector p = FloatVector.broadcast(S16, q[qa + d]);
            a0 = FloatVector.fromArray(S16, kT, base).fma(p, a0);
            a1 = FloatVector.fromArray(S16, kT, base + 16).fma(p, a1);
            a2 = FloatVector.fromArray(S16, kT, base + 32).fma(p, a2);
            a3 = FloatVector.fromArray(S16, kT, base + 48).fma(p, a3);
        }
        store(kq, ka, a0, a1, a2, a3);
    }

    private static void store(float[] kq, int o, FloatVector v0, FloatVector v1, FloatVector v2, FloatVector v3) {
        v0.intoArray(kq, o);
        v1.intoArray(kq, o + 16);
        v2.intoArray(kq, o + 32);
        v3.intoArray(kq, o + 48);
    }

    /**
     * Four rows' {@code acc[d] = fma(V_t[d], w_t, acc[d])} for t in [0, count) in order (ggml_vec_mad_f32 per key),
     * V from {@code v[vBase + t·vStride ..]}, the weights at {@code kq[w..]}.
     */
    private static void addValues4(float[] acc, int oa, int ob, int oc, int od, float[] kq, int wa, int wb, int wc,
                                   int wd, float[] v, int vBase, int vStride, int count, int vDim) {
        int d = 0;
        for (; d + LANES <= vDim; d += LANES) {
            FloatVector a = FloatVector.fromArray(S16, acc, oa + d), b = FloatVector.fromArray(S16, acc, ob + d),
                    c = FloatVector.fromArray(S16, acc, oc + d), e = FloatVector.fromArray(S16, acc, od + d);
            for (int t = 0; t < count; t++) {
                FloatVector x = FloatVector.fromArray(S16, v, vBase + t * vStride + d);
                a = x.fma(FloatVector.broadcast(S16, kq[wa + t]), a);
                b = x.fma(FloatVector.broadcast(S16, kq[wb + t]), b);
                c = x.fma(FloatVector.broadcast(S16, kq[wc + t]), c);
                e = x.fma(FloatVector.broadcast(S16, kq[wd + t]), e);
            }
            a.intoArray(acc, oa + d);
            b.intoArray(acc, ob + d);
            c.intoArray(acc, oc + d);
            e.intoArray(acc, od + d);
        }
        if (d < vDim) {
            addTail(acc, oa, kq, wa, v, vBase, vStride, count, d, vDim);
            addTail(acc, ob, kq, wb, v, vBase, vStride, count, d, vDim);
            addTail(acc, oc, kq, wc, v, vBase, vStride, count, d, vDim);
            addTail(acc, od, kq, wd, v, vBase, vStride, count, d, vDim);
        }
    }

    /** One row's values, as {@link #addValues4}. */
    private static void addValues1(float[] acc, int oa, float[] kq, int wa, float[] v, int vBase, int vStride,
                                   int count, int vDim) {
        int d = 0;
        for (; d + LANES <= vDim; d += LANES) {
            FloatVector a = FloatVector.fromArray(S16, acc, oa + d);
            for (int t = 0; t < count; t++) {
                a = FloatVector.fromArray(S16, v, vBase + t * vStride + d).fma(FloatVector.broadcast(S16, kq[wa + t]), a);
            }
            a.intoArray(acc, oa + d);
        }
        addTail(acc, oa, kq, wa, v, vBase, vStride, count, d, vDim);
    }

    private static void addTail(float[] acc, int o, float[] kq, int w, float[] v, int vBase, int vStride, int count,
                                int from, int vDim) {
        for (int d = from; d < vDim; d++) {
            float a = acc[o + d];
            for (int t = 0; t < count; t++) {
                a = Math.fma(v[vBase + t * vStride + d], kq[w + t], a);
            }
            acc[o + d] = a;
        }
    }
}
