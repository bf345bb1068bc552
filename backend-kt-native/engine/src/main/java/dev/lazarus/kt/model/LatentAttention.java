package dev.lazarus.kt.model;

import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.parallel.RowSplitter;
import dev.lazarus.kt.tensor.WeightMatrix;

/**
 * deepseek2's multi-head latent attention. Keys and values come from a compressed latent
 * ({@code kv_lora_rank} wide) plus one rotated key part shared by all heads. Two layouts, as the
 * GGUF provides them:
 * <ul>
 *   <li><b>absorbed</b> ({@code attn_k_b}, {@code attn_v_b}): the cache holds the latent and the
 *       rotated key once per position; queries are mapped into latent space per head, and the
 *       attended latent is decompressed per head afterwards (llama.cpp's MLA path);</li>
 *   <li><b>decompressed</b> ({@code attn_kv_b}): the latent is expanded to per-head keys and values
 *       before caching, which is plain multi-head attention.</li>
 * </ul>
 */
final class LatentAttention implements Attention {

    /** The query path: direct ({@code attn_q}) or through a low-rank bottleneck with a norm. */
    record QueryWeights(WeightMatrix direct, WeightMatrix down, float[] downNorm, WeightMatrix up) {}

    /** Absorbed: per-head {@code k_b} (latent ← nope) and {@code v_b} (value ← latent). Decompressed: {@code kv_b}. */
    record LatentWeights(WeightMatrix[] keyAbsorb, WeightMatrix[] valueDecompress, WeightMatrix kvUp) {
        boolean absorbed() {
            return kvUp == null;
        }
    }

    private final int block;
    private final int heads;
    private final MlaConfig mla;
    private final QueryWeights query;
    private final WeightMatrix kvDown;
    private final float[] kvDownNorm;
    private final LatentWeights latent;
    private final WeightMatrix output;
    private final float eps;
    private final Rope rope;
    private final float scale;
    private final AttentionOrder order;
    private final Parallel parallel;
    /** deepseek32's sparse attention: which cached positions each query attends; null: all (deepseek2). */
    private final LightningIndexer indexer;
    /** GLM-5.2's shared indexers: where a block with its own puts its choice and one without takes it; else null. */
    private final SharedSelection shared;

    LatentAttention(int block, ModelConfig config, QueryWeights query, WeightMatrix kvDown, float[] kvDownNorm,
                    LatentWeights latent, WeightMatrix output, Rope rope, AttentionOrder order, Parallel parallel) {
        this(block, config, query, kvDown, kvDownNorm, latent, output, rope, order, parallel, null, null);
    }

    /** With {@code shared}, a block whose {@code indexer} is null attends what the last block with one chose. */
    LatentAttention(int block, ModelConfig config, QueryWeights query, WeightMatrix kvDown, float[] kvDownNorm,
                    LatentWeights latent, WeightMatrix output, Rope rope, AttentionOrder order, Parallel parallel,
                    LightningIndexer indexer, SharedSelection shared) {
        if ((indexer != null || shared != null) && !latent.absorbed()) {
            throw new ModelFormatException("sparse attention needs split attn_k_b/attn_v_b");
        }
        this.indexer = indexer;
        this.shared = shared;
        this.block = block;
        this.heads = config.headCount();
        this.mla = config.mla();
        this.query = query;
        this.kvDown = kvDown;
        this.kvDownNorm = kvDownNorm;
        this.latent = latent;
        this.output = output;
        this.eps = config.rmsEps();
        this.rope = rope;
        this.scale = config.rope().mlaScoreScale(mla.keyDim());
        this.order = order;
        this.parallel = parallel;
    }

    @Override
    public int keyWidth() {
        // absorbed: [latent | rotated key | indexer key]
        return latent.absorbed() ? mla.kvLoraRank() + mla.qkRopeDim() + (indexer == null ? 0 : indexer.keyDim())
                : heads * mla.keyDim();
    }

    @Override
    public int valueWidth() {
        return latent.absorbed() ? 0 : heads * mla.valueDim();
    }

    @Override
    public int keyHeadWidth() {
        return latent.absorbed() ? mla.kvLoraRank() + mla.qkRopeDim() : mla.keyDim();
    }

    @Override
    public int valueHeadWidth() {
        return latent.absorbed() ? mla.kvLoraRank() : mla.valueDim();
    }

    @Override
    public float[][] forward(ForwardBatch batch, float[][] ropeTables, float[][] xn) {
        int n = batch.size();
        int kvLora = mla.kvLoraRank();
        float[][] qr = query.direct() != null ? null : compressedQueries(xn);
        float[][] q = qr == null ? Projections.apply(parallel, query.direct(), xn)
                : Projections.apply(parallel, query.up(), qr);
        float[][] kvpe = Projections.apply(parallel, kvDown, xn);
        for (int i = 0; i < n; i++) {
            for (int h = 0; h < heads; h++) {
                rope.rotate(q[i], h * mla.keyDim() + mla.qkNopeDim(), ropeTables[i]);
            }
            rope.rotate(kvpe[i], kvLora, ropeTables[i]);
            Numerics.rmsNorm(kvpe[i], 0, kvLora, kvDownNorm, eps, kvpe[i], 0);
        }
        float[][] attended;
        if (latent.absorbed()) {
            float[][] indexerKeys = indexer == null ? null : indexer.keys(xn, ropeTables);
            storeAbsorbed(batch, kvpe, indexerKeys);
            boolean[][] keep;
            if (indexer != null) {
                keep = indexer.select(batch, block, kvLora + mla.qkRopeDim(), keyWidth(), qr, xn, ropeTables);
                if (shared != null) {
                    shared.put(batch, keep);
                }
            } else {
                keep = shared == null ? null : shared.get(batch);
            }
            attended = attendAbsorbed(batch, q, keep);
        } else {
            attended = attendDecompressed(batch, q, kvpe);
        }
        return Projections.apply(parallel, output, attended);
    }

    /** The query LoRA's normalised bottleneck (the queries' and the indexer's input). */
    private float[][] compressedQueries(float[][] xn) {
        float[][] compressed = Projections.apply(parallel, query.down(), xn);
        for (float[] c : compressed) {
            Numerics.rmsNorm(c, 0, c.length, query.downNorm(), eps, c, 0);
        }
        return compressed;
    }

    /** Every token's cache row, [latent | rotated key], then its indexer key with sparse attention. */
    private void storeAbsorbed(ForwardBatch batch, float[][] kvpe, float[][] indexerKeys) {
        for (int i = 0; i < batch.size(); i++) {
            float[] row = kvpe[i];
            if (indexerKeys != null) {
                row = java.util.Arrays.copyOf(kvpe[i], keyWidth());
                System.arraycopy(indexerKeys[i], 0, row, kvpe[i].length, indexerKeys[i].length);
            }
            batch.caches()[i].store(block, batch.positions()[i], row, 0, null, 0);
        }
    }

    /**
     * Queries = [k_b · q_nope | q_pe] against the cached [latent | rotated key]; values = the latent. With
     * {@code keep} (sparse attention), token i attends only the positions {@code keep[i]} marks (null: all).
     */
    private float[][] attendAbsorbed(ForwardBatch batch, float[][] q, boolean[][] keep) {
        int n = batch.size();
        int kvLora = mla.kvLoraRank();
        int rot = mla.qkRopeDim();
        int width = kvLora + rot;
        float[][][] nope = new float[heads][n][mla.qkNopeDim()];
        float[][][] absorbed = new float[heads][n][kvLora];
        for (int h = 0; h < heads; h++) {
            for (int i = 0; i < n; i++) {
                System.arraycopy(q[i], h * mla.keyDim(), nope[h][i], 0, mla.qkNopeDim());
            }
        }
        perHead(latent.keyAbsorb(), nope, absorbed);
        float[][] fullQ = new float[n][heads * width];
        for (int i = 0; i < n; i++) {
            for (int h = 0; h < heads; h++) {
                System.arraycopy(absorbed[h][i], 0, fullQ[i], h * width, kvLora);
                System.arraycopy(q[i], h * mla.keyDim() + mla.qkNopeDim(), fullQ[i], h * width + kvLora, rot);
            }
        }
        float[][][] latentOut = new float[heads][n][kvLora];
        parallel.forRange(n * heads, (from, to) -> {
            for (int task = from; task < to; task++) {
                int i = task / heads;
                int h = task % heads;
                KvRows keys = batch.caches()[i].keyRows(block);
                attend(batch, fullQ[i], h * width, width, keys, 0, keys, 0, kvLora, batch.positions()[i] + 1,
                        keep == null ? null : keep[i], latentOut[h][i], 0);
            }
        });
        float[][][] values = new float[heads][n][mla.valueDim()];
        perHead(latent.valueDecompress(), latentOut, values);
        float[][] attended = new float[n][heads * mla.valueDim()];
        for (int i = 0; i < n; i++) {
            for (int h = 0; h < heads; h++) {
                System.arraycopy(values[h][i], 0, attended[i], h * mla.valueDim(), mla.valueDim());
            }
        }
        return attended;
    }

    /** Keys per head = [k_nope_h | shared rotated key]; values per head from kv_b. */
    private float[][] attendDecompressed(ForwardBatch batch, float[][] q, float[][] kvpe) {
        int n = batch.size();
        int kvLora = mla.kvLoraRank();
        int nope = mla.qkNopeDim();
        int keyDim = mla.keyDim();
        int vDim = mla.valueDim();
        float[][] latentIn = new float[n][];
        for (int i = 0; i < n; i++) {
            latentIn[i] = java.util.Arrays.copyOf(kvpe[i], kvLora);
        }
        float[][] kv = Projections.apply(parallel, latent.kvUp(), latentIn);
        for (int i = 0; i < n; i++) {
            float[] k = new float[heads * keyDim];
            float[] v = new float[heads * vDim];
            for (int h = 0; h < heads; h++) {
                System.arraycopy(kv[i], h * (nope + vDim), k, h * keyDim, nope);
                System.arraycopy(kvpe[i], kvLora, k, h * keyDim + nope, mla.qkRopeDim());
                System.arraycopy(kv[i], h * (nope + vDim) + nope, v, h * vDim, vDim);
            }
            // plain multi-head attention in llama.cpp's graph: a quantised cache rotates as there (KvRotation)
            KvCacheTypes types = batch.caches()[i].types();
            int kChunk = KvRotation.keyChunk(types.keys(), keyDim);
            if (kChunk > 0) {
                KvRotation.rotate(q[i], 0, heads * keyDim, kChunk);
                KvRotation.rotate(k, 0, heads * keyDim, kChunk);
            }
            int vChunk = KvRotation.valueChunk(types.values(), vDim);
            if (vChunk > 0) {
                KvRotation.rotate(v, 0, heads * vDim, vChunk);
            }
            batch.caches()[i].store(block, batch.positions()[i], k, 0, v, 0);
        }
        float[][] attended = new float[n][heads * vDim];
        parallel.forRange(n * heads, (from, to) -> {
            for (int task = from; task < to; task++) {
                int i = task / heads;
                int h = task % heads;
                KvCache cache = batch.caches()[i];
                attend(batch, q[i], h * keyDim, keyDim, cache.keyRows(block), h * keyDim,
                        cache.valueRows(block), h * vDim, vDim, batch.positions()[i] + 1, null, attended[i],
                        h * vDim);
            }
        });
        for (int i = 0; i < n; i++) {
            int vChunk = KvRotation.valueChunk(batch.caches()[i].types().values(), vDim);
            if (vChunk > 0) {
                KvRotation.rotate(attended[i], 0, heads * vDim, vChunk);
            }
        }
        return attended;
    }

    /**
     * One head of one token in the configured order. With flash attention llama.cpp runs the absorbed layout's
     * values as a view of the cached latent (the first {@code kv_lora_rank} of each row), so K and V are one F16 type.
     */
    private void attend(ForwardBatch batch, float[] q, int qOff, int dim, KvRows keys, int kOff, KvRows values,
                        int vOff, int vDim, int positions, boolean[] keep, float[] out, int outOff) {
        if (order.flash()) {
            FlashKv kv = TypedFlashKv.of(keys, kOff, values, vOff, vDim);
            FlashAttentionKernel.attend(q, qOff, dim, kv, 0, positions, scale, Float.NEGATIVE_INFINITY, keep,
                    FlashAttentionKernel.path(batch.size(), positions, kv.floatRows() != null), order.threads(), out,
                    outOff);
        } else if (keep == null) {
            AttentionKernel.attend(q, qOff, dim, keys, kOff, values, vOff, vDim, 0, positions, scale,
                    Float.NEGATIVE_INFINITY, out, outOff);
        } else {
            // sparse attention (deepseek32) keeps an F16 cache: Model.checkCacheTypes refuses the others
            AttentionKernel.attend(q, qOff, dim, keys.halves(), kOff, keys.width(), values.halves(), vOff,
                    values.width(), vDim, positions, scale, keep, out, outOff);
        }
    }

    /** {@code out[h][i] = ws[h] · in[h][i]} for all heads in one parallel pass. */
    private void perHead(WeightMatrix[] ws, float[][][] in, float[][][] out) {
        int[] rows = new int[heads];
        for (int h = 0; h < heads; h++) {
            rows[h] = ws[h].rows();
        }
        RowSplitter.run(parallel, rows, (h, from, to) -> ws[h].matmul(in[h], out[h], from, to));
    }
}
