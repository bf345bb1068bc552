package dev.lazarus.kt.gpu;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.model.BlockTensors;
import dev.lazarus.kt.model.KvCache;
import dev.lazarus.kt.model.Model;
import dev.lazarus.kt.model.ModelConfig;
import dev.lazarus.kt.model.MoeConfig;
import dev.lazarus.kt.model.Rope;
import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.placement.ExpertCheckout;
import dev.lazarus.kt.placement.ExpertPlacement;
import dev.lazarus.kt.placement.Tier;
import dev.lazarus.kt.tensor.WeightMatrix;
import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.function.IntPredicate;

/**
 * The GPU layer path's prompt pass: a run of one sequence's consecutive positions computed as a batch, block by
 * block, with the prompt kernels of prefill.cu. Per block: the norms of every token, the q/k/v and output
 * projections as mat-mat products (Q8_0 as int8 tensor-core tiles of 64 weight rows and {@link PrefillKernels#TILE}
 * tokens, mma.cuh), QK-norm, rope and the K/V store of every token, then causal attention of every token over the cache;
 * the router of every token, the device's top-k ({@code moe_route}'s body) for all of them, one download of the
 * routes, the slots grouped by expert on the host ({@link ExpertGroups}) and the expert SwiGLUs as tiles of one
 * expert's tokens; a dense FFN or shared expert is the same kernels with one expert every token uses. Experts
 * placed on the CPU are computed by the CPU for all their tokens while the GPU computes its own, or, from
 * {@link #stageTokens} tokens on, uploaded to the GPU block by block ({@link ExpertStaging}) and computed there.
 *
 * <p>Every token's arithmetic is the decode kernels' (the same bodies, the same row dots for the non-Q8_0 types)
 * except the Q8_0 products, whose tiles fold each 32-value block's exact integer sum in block order where a decode
 * row dot folds per lane: a prompt computed here gives logits within rounding of decoding it token by token
 * (measured: docs/benchmarks.md#gpu-prompt), and differs also where staged CPU experts join the GPU's
 * weighted sum (decoding adds their sum apart) and where the CPU batches an expert's tokens. Only grouped-query attention has batched kernels: a model with latent attention (deepseek2)
 * or group-limited routing keeps the token-by-token path ({@link #unsupported}).
 */
final class GpuPrefill implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(GpuPrefill.class.getName());

    /** Tokens computed as one batch at most; longer runs go in chunks. */
    static final int MAX_CHUNK = 512;
    /** Most bytes the attention scores of a chunk may take (heads × tokens × positions floats). */
    private static final long SCORE_BYTES = 256L << 20;
    /** System property: prompt chunks of at least this many tokens stage their CPU-tier experts on the GPU. */
    static final String STAGE_PROPERTY = "lazarus.kt.gpu.prefill-stage-tokens";
    /**
     * Measured on an H100 (benchQwen3MoeSkewed Q8_0, experts on the CPU, 16 Xeon threads): staging a prompt's experts
     * costs about 60 ms whatever its length (2.5 GB from registered memory), the CPU about 1.6 ms per token, so
     * staging wins from roughly 10-20 tokens on; at 64 tokens it was 2.3x faster (1.9x with 10 % of the experts on
     * the GPU). 32 leaves room for a slower bus.
     */
    static final int DEFAULT_STAGE_TOKENS = 32;

    private final CudaDriver cu;
    private final MemorySegment stream;
    private final LayerKernels kernels;
    private final PrefillKernels pk;
    private final DeviceWeights weights;
    private final GqaDeviceAttention attention;
    private final DeviceMoe moe;
    private final DeviceKvCaches kv;
    private final ExpertPlacement placement;
    private final Parallel parallel;
    private final GgufFile file;
    private final BlockTensors.Experts[] routed;
    private final WeightMatrix embedding;
    private final Rope rope;
    private final MoeConfig moeConfig;
    private final int blocks, dim, experts, k, hidden, vocab, ropeDims, qkvWidth, attWidth, kvWidth, valueWidth;
    private final float eps;
    private final int stageTokens;
    private final DeviceAllocations fixed;
    private final DeviceAllocations chunk;
    /** Per block the expert pointer table (3 per expert) and the dense FFN / shared expert as a one-expert table. */
    private final long dTables, dDense;
    private final MemorySegment hTables;
    private ExpertStaging staging;
    private boolean stagingFailed;
    private int cap, stride;
    private long dX, dRope, dNormed, dXq, dQkv, dAtt, dAttQ, dKvOut, dRouter, dIds, dW, dH, dHq, dY, dCpuSum;
    private long dTiles, dSlots, dDenseTiles, dDenseSlots, dZeros, dOnes, dScores, dLogits;
    private MemorySegment hIn, hNormed, hRoutes, hTiles, hSlots, hCpuSum, hKvOut, hLogits, hDense;

    private GpuPrefill(Model model, GgufFile file, CudaDriver cu, MemorySegment stream, MemorySegment module, Arena arena,
                       LayerKernels kernels, DeviceWeights weights, GqaDeviceAttention attention, DeviceMoe moe,
                       DeviceKvCaches kv, ExpertPlacement placement) {
        ModelConfig c = model.config();
        this.cu = cu;
        this.stream = stream;
        this.kernels = kernels;
        this.pk = new PrefillKernels(cu, module, stream, arena);
        this.weights = weights;
        this.attention = attention;
        this.moe = moe;
        this.kv = kv;
        this.placement = placement;
        this.parallel = model.parallel();
        this.file = file;
        this.blocks = c.blockCount();
        this.dim = c.embeddingLength();
        this.moeConfig = c.moe();
        this.experts = moeConfig == null ? 0 : moeConfig.expertCount();
        this.k = moeConfig == null ? 1 : moeConfig.expertsUsed();
        this.hidden = Math.max(moeConfig == null ? 0 : moeConfig.expertFfnLength(), weights.widestFfn());
        this.vocab = model.vocabSize();
        this.ropeDims = c.rope().dimensions();
        this.eps = c.rmsEps();
        this.embedding = model.embedding();
        this.rope = new Rope(c.rope());
        LayerKernels.Heads h = attention.shape();
        this.qkvWidth = h.qkvWidth();
        this.attWidth = h.heads() * h.valueDim();
        this.kvWidth = h.kvWidth();
        this.valueWidth = attention.valueWidth();
        this.routed = new BlockTensors.Experts[blocks];
        for (int b = 0; b < blocks; b++) {
            routed[b] = model.tensors().block(b).experts();
        }
        this.stageTokens = Integer.getInteger(STAGE_PROPERTY, DEFAULT_STAGE_TOKENS);
        this.fixed = new DeviceAllocations(cu);
        this.chunk = new DeviceAllocations(cu);
        try {
            dTables = fixed.device(Math.max(8, 24L * blocks * experts));
            hTables = fixed.host(Math.max(8, 24L * blocks * experts));
            dDense = fixed.device(24L * blocks);
            MemorySegment hDenseTable = fixed.host(24L * blocks);
            for (int b = 0; b < blocks; b++) {
                DeviceWeights.SwiGluMatrices f = weights.block(b).ffn();
                if (f != null) {
                    hDenseTable.setAtIndex(JAVA_LONG, 3L * b, f.gate().data());
                    hDenseTable.setAtIndex(JAVA_LONG, 3L * b + 1, f.up().data());
                    hDenseTable.setAtIndex(JAVA_LONG, 3L * b + 2, f.down().data());
                }
            }
            cu.copyToDevice(dDense, hDenseTable, 24L * blocks, stream);
            cu.synchronize(stream);
        } catch (RuntimeException | Error e) {
            fixed.freeAll();
            throw e;
        }
    }

    /**
     * The prompt pass for the GPU layer path's parts, or null when the model has a part without batched kernels
     * (said in the log: such prompts run token by token).
     */
    static GpuPrefill create(Model model, GgufFile file, CudaDriver cu, MemorySegment stream, MemorySegment module,
                             Arena arena, LayerKernels kernels, DeviceWeights weights, DeviceAttention attention,
                             DeviceMoe moe, DeviceKvCaches kv, ExpertPlacement placement) {
        String why = unsupported(model, weights, attention, moe);
        if (why != null) {
            LOG.log(Level.INFO, "GPU prefill: prompts run token by token ({0})", why);
            return null;
        }
        LOG.log(Level.INFO, "GPU prefill: prompts batched per block, CPU-tier experts staged to the GPU from {0} tokens",
                Integer.getInteger(STAGE_PROPERTY, DEFAULT_STAGE_TOKENS));
        try {
            return new GpuPrefill(model, file, cu, stream, module, arena, kernels, weights,
                    (GqaDeviceAttention) attention, moe, kv, placement);
        } catch (CudaException e) {
            LOG.log(Level.WARNING, "GPU prefill: prompts run token by token ({0})", e.getMessage());
            return null;
        }
    }

    /** Why the prompt of this model cannot be batched on the GPU, or null. */
    static String unsupported(Model model, DeviceWeights weights, DeviceAttention attention, DeviceMoe moe) {
        if (!(attention instanceof GqaDeviceAttention)) {
            return "latent attention (deepseek2) has no batched prompt kernels yet";
        }
        if (!model.expertLayers().isEmpty() && moe == null) {
            return "group-limited routing is done on the host";
        }
        for (int b = 0; b < model.config().blockCount(); b++) {
            DeviceWeights.SwiGluMatrices f = weights.block(b).ffn();
            if (f != null && !(LayerKernels.quantized(f.gate().type()) && LayerKernels.quantized(f.down().type()))) {
                return "the dense FFN is " + f.gate().type() + " (the batched SwiGLU takes quantized blocks)";
            }
        }
        return null;
    }

    /**
     * Computes the {@code count} tokens at {@code from} of the batch arrays, one sequence's consecutive positions
     * starting at {@code positions[from]}, writing the wanted logits into {@code out}.
     */
    void forward(int[] tokens, int[] positions, KvCache cache, boolean[] wantLogits, int from, int count,
                 float[][] out) {
        for (int i = from; i < from + count; i++) {
            if (tokens[i] < 0 || tokens[i] >= embedding.rows()) {
                throw new IllegalArgumentException("token id " + tokens[i] + " outside vocabulary of " + embedding.rows());
            }
        }
        int done = 0;
        while (done < count) {
            int start = positions[from + done];
            int n = Math.min(count - done, MAX_CHUNK);
            while (n > PrefillKernels.TILE && 4L * attention.heads() * n * (start + n) > SCORE_BYTES) {
                n /= 2;
            }
            chunk(tokens, from + done, n, start, cache, wantLogits, out);
            done += n;
        }
    }

    private void chunk(int[] tokens, int at, int n, int start, KvCache cache, boolean[] want, float[][] out) {
        ensureBuffers(n, start + n);
        DeviceKvCaches.Copy copy = kv.prepare(cache, start, n);
        float[] row = new float[dim];
        for (int t = 0; t < n; t++) {
            embedding.dequantizeRow(tokens[at + t], row, 0);
            MemorySegment.copy(row, 0, hIn, JAVA_FLOAT, 4L * t * dim, dim);
            MemorySegment.copy(rope.table(start + t), 0, hIn, JAVA_FLOAT, 4L * ((long) n * dim + t * ropeDims), ropeDims);
        }
        cu.copyToDevice(dX, hIn, 4L * n * dim, stream);
        cu.copyToDevice(dRope, hIn.asSlice(4L * n * dim), 4L * n * ropeDims, stream);
        int[] dense = ExpertGroups.denseTiles(n);
        MemorySegment.copy(dense, 0, hDense, JAVA_INT, 0, dense.length);
        for (int t = 0; t < n; t++) {
            hDense.setAtIndex(JAVA_INT, dense.length + t, t);
            hDense.setAtIndex(JAVA_INT, dense.length + n + t, 0);
            hDense.setAtIndex(JAVA_FLOAT, dense.length + 2L * n + t, 1f);
        }
        cu.copyToDevice(dDenseTiles, hDense, 4L * dense.length, stream);
        cu.copyToDevice(dDenseSlots, hDense.asSlice(4L * dense.length), 4L * n, stream);
        cu.copyToDevice(dZeros, hDense.asSlice(4L * (dense.length + n)), 4L * n, stream);
        cu.copyToDevice(dOnes, hDense.asSlice(4L * (dense.length + 2L * n)), 4L * n, stream);
        ExpertCheckout[] layers = new ExpertCheckout[blocks];
        int[][] routes = new int[blocks][];
        boolean done = false;
        try {
            boolean stage = tables(layers, n);
            int m = 0;
            int next = nextMoe(-1);
            if (stage) {
                staging.upload(0, next, routed[next].routed(), experts, cpuTier(layers[next]));
            }
            for (int b = 0; b < blocks; b++) {
                DeviceWeights.Block w = weights.block(b);
                pk.rmsNorm(dX, w.attnNorm(), dNormed, dXq, dim, eps, n);
                attention(b, copy, start, n);
                pk.rmsNorm(dX, w.ffnNorm(), dNormed, dXq, dim, eps, n);
                if (w.router() == null) {
                    swiGlu(b, n);
                    continue;
                }
                pk.matmul(w.router(), dNormed, dXq, dRouter, experts, 1f, false, n);
                if (w.ffn() != null) {
                    swiGlu(b, n); // the shared expert
                }
                routes[b] = experts(b, m, stage, layers, n);
                m++;
            }
            cu.copyToHost(hKvOut, dKvOut, 4L * n * blocks * kvWidth, stream);
            cu.synchronize(stream);
            writeBack(cache, start, n);
            for (int t = 0; t < n; t++) {
                if (want[at + t]) {
                    kernels.rmsNorm(dX + 4L * t * dim, weights.outputNorm, dNormed, dXq, dim, eps);
                    kernels.matvec(weights.output, dNormed, dXq, dLogits, 1f, false);
                    cu.copyToHost(hLogits, dLogits, 4L * vocab, stream);
                    cu.synchronize(stream);
                    out[at + t] = new float[vocab];
                    MemorySegment.copy(hLogits, JAVA_FLOAT, 0, out[at + t], 0, vocab);
                }
            }
            copy.valid = start + n;
            done = true;
        } catch (RuntimeException | Error e) {
            try {
                cu.synchronize(stream); // the experts may still be read: wait before the checkouts let go
            } catch (RuntimeException s) {
                e.addSuppressed(s);
            }
            throw e;
        } finally {
            finish(layers, routes, n, done);
        }
    }

    /**
     * Takes every MoE block's experts and uploads their pointer tables: GPU-tier experts where they live, the
     * others in the staging buffer their block will be uploaded to when this chunk stages (returned), else 0 (the
     * CPU computes them).
     */
    private boolean tables(ExpertCheckout[] layers, int n) {
        if (placement == null || experts == 0) {
            return false;
        }
        boolean anyCpu = false;
        for (int b = 0; b < blocks; b++) {
            if (routed[b] != null) {
                layers[b] = placement.checkoutLayer(b);
                for (int e = 0; e < experts; e++) {
                    anyCpu |= layers[b].tier(e) != Tier.GPU;
                }
            }
        }
        boolean stage = anyCpu && n >= stageTokens && stagingReady();
        int m = 0;
        for (int b = 0; b < blocks; b++) {
            if (routed[b] == null) {
                continue;
            }
            long[] base = stage ? staging.bases(m % 2, routed[b].routed()) : null;
            for (int e = 0; e < experts; e++) {
                long at = 3L * (b * experts + e);
                long g = 0, u = 0, d = 0;
                if (layers[b].tier(e) == Tier.GPU) {
                    CudaExpertTier.CudaExpert x = (CudaExpertTier.CudaExpert) layers[b].device(e);
                    g = x.gate;
                    u = x.up;
                    d = x.down;
                } else if (stage) {
                    BlockTensors.SwiGluTensors t = routed[b].routed();
                    g = base[0] + e * (t.gate().byteSize() / experts);
                    u = base[1] + e * (t.up().byteSize() / experts);
                    d = base[2] + e * (t.down().byteSize() / experts);
                }
                hTables.setAtIndex(JAVA_LONG, at, g);
                hTables.setAtIndex(JAVA_LONG, at + 1, u);
                hTables.setAtIndex(JAVA_LONG, at + 2, d);
            }
            m++;
        }
        cu.copyToDevice(dTables, hTables, 24L * blocks * experts, stream);
        return stage;
    }

    /** The experts of a block the staging uploads: those not on the GPU tier (whose tables name their own copies). */
    private static IntPredicate cpuTier(ExpertCheckout layer) {
        return e -> layer.tier(e) != Tier.GPU;
    }

    /** Whether the staging buffers exist (made on the first long prompt; a failed allocation disables staging). */
    private boolean stagingReady() {
        if (staging == null && !stagingFailed) {
            for (BlockTensors.Experts e : routed) {
                if (e != null && !(LayerKernels.quantized(e.routed().gate().type())
                        && LayerKernels.quantized(e.routed().down().type()))) {
                    stagingFailed = true;
                    LOG.log(Level.INFO, "GPU prefill: {0} experts are not staged (no GPU kernel)", e.routed().gate().type());
                    return false;
                }
            }
            try {
                staging = new ExpertStaging(cu, stream, file, routed);
                LOG.log(Level.INFO, "GPU prefill: {0} MiB of expert staging buffers, uploads from {1} memory",
                        staging.bytes() >> 20, staging.pinned() ? "page-locked" : "pageable");
            } catch (CudaException e) {
                stagingFailed = true;
                LOG.log(Level.WARNING, "GPU prefill: no memory for expert staging, the CPU computes its experts: {0}",
                        e.getMessage());
            }
        }
        return staging != null;
    }

    private int nextMoe(int after) {
        for (int b = after + 1; b < blocks; b++) {
            if (routed[b] != null) {
                return b;
            }
        }
        return -1;
    }

    private void attention(int b, DeviceKvCaches.Copy copy, int start, int n) {
        GqaDeviceAttention.Weights a = attention.weights(b);
        LayerKernels.Heads h = attention.shape();
        pk.matmul(a.q(), dNormed, dXq, dQkv, qkvWidth, 1f, false, n);
        pk.matmul(a.k(), dNormed, dXq, dQkv + 4L * a.q().rows(), qkvWidth, 1f, false, n);
        pk.matmul(a.v(), dNormed, dXq, dQkv + 4L * (a.q().rows() + a.k().rows()), qkvWidth, 1f, false, n);
        pk.qkNormRopeStore(dQkv, qkvWidth, a.qNorm(), a.kNorm(), dRope, copy.keys(b), copy.values(b),
                dKvOut + 4L * b * kvWidth, blocks * kvWidth, h, start, n);
        pk.attention(dQkv, qkvWidth, copy.keys(b), copy.values(b), dScores, stride, dAtt, attWidth, h, valueWidth, start,
                attention.scale(), n);
        if (LayerKernels.quantized(a.output().type())) {
            kernels.quantize(dAtt, dAttQ, n * attWidth);
        }
        pk.matmul(a.output(), dAtt, dAttQ, dX, dim, 1f, true, n);
    }

    /** {@code x += down(silu(gate · xn) * up · xn)} for every token: block b's dense FFN or shared expert. */
    private void swiGlu(int b, int n) {
        DeviceWeights.SwiGluMatrices f = weights.block(b).ffn();
        long table = dDense + 24L * b;
        int tiles = (n + PrefillKernels.TILE - 1) / PrefillKernels.TILE;
        pk.gateUp(table, dDenseTiles, tiles, dDenseSlots, 1, dXq, dH, f.hidden(), dim, f.gate().type());
        kernels.quantize(dH, dHq, n * f.hidden());
        pk.down(table, dDenseTiles, tiles, dDenseSlots, dHq, dY, dim, f.hidden(), f.down().type());
        pk.combine(table, dZeros, dOnes, dY, dX, dim, 1, n);
    }

    /** Block b's routed experts for every token (m: its index among the MoE blocks); returns the chosen ids. */
    private int[] experts(int b, int m, boolean stage, ExpertCheckout[] layers, int n) {
        int slots = n * k;
        pk.route(dRouter, experts, moe.bias(b), experts, k, moeConfig.gating() == MoeConfig.Gating.SIGMOID,
                moeConfig.normalizeWeights(), moeConfig.weightsScale(), dIds, dW, n);
        cu.copyToHost(hRoutes, dIds, 4L * slots, stream);
        cu.copyToHost(hRoutes.asSlice(4L * slots), dW, 4L * slots, stream);
        long table = dTables + 24L * b * experts;
        boolean hostWork = false;
        for (int e = 0; e < experts && !stage; e++) {
            hostWork |= hTables.getAtIndex(JAVA_LONG, 3L * (b * experts + e)) == 0;
        }
        if (hostWork) {
            cu.copyToHost(hNormed, dNormed, 4L * n * dim, stream);
        }
        cu.synchronize(stream);
        int[] ids = new int[slots];
        MemorySegment.copy(hRoutes, JAVA_INT, 0, ids, 0, slots);
        ExpertGroups g = ExpertGroups.of(ids, slots, experts,
                e -> hTables.getAtIndex(JAVA_LONG, 3L * (b * experts + e)) != 0);
        if (g.tileCount > 0) {
            MemorySegment.copy(g.tiles, 0, hTiles, JAVA_INT, 0, 3 * g.tileCount);
            MemorySegment.copy(g.slots, 0, hSlots, JAVA_INT, 0, g.slots.length);
            cu.copyToDevice(dTiles, hTiles, 12L * g.tileCount, stream);
            cu.copyToDevice(dSlots, hSlots, 4L * g.slots.length, stream);
            if (stage) {
                staging.acquire(m % 2, b);
            }
            GgmlType gateType = routed[b].routed().gate().type(), downType = routed[b].routed().down().type();
            pk.gateUp(table, dTiles, g.tileCount, dSlots, k, dXq, dH, hidden, dim, gateType);
            kernels.quantize(dH, dHq, slots * hidden);
            pk.down(table, dTiles, g.tileCount, dSlots, dHq, dY, dim, hidden, downType);
            pk.combine(table, dIds, dW, dY, dX, dim, k, n);
        }
        if (stage) {
            staging.release(m % 2);
            int next = nextMoe(b);
            if (next >= 0) {
                staging.upload((m + 1) % 2, next, routed[next].routed(), experts, cpuTier(layers[next])); // overlaps this block's expert kernels
            }
        }
        if (g.anyOnHost()) {
            hostExperts(g, layers[b], n);
        }
        return ids;
    }

    /** The CPU-tier experts of the block for all their tokens; their weighted sums per token go up and are added. */
    private void hostExperts(ExpertGroups g, ExpertCheckout layer, int n) {
        float[] sums = HostExperts.sums(parallel, g, layer, hNormed, hRoutes.asSlice(4L * n * k), n, k, dim);
        MemorySegment.copy(sums, 0, hCpuSum, JAVA_FLOAT, 0, n * dim);
        cu.copyToDevice(dCpuSum, hCpuSum, 4L * n * dim, stream);
        kernels.add(dX, dCpuSum, n * dim);
    }

    /** Counts the device's routing (when the chunk completed) and lets the experts go. */
    private void finish(ExpertCheckout[] layers, int[][] routes, int n, boolean counted) {
        int[] chosen = new int[k];
        for (int b = 0; b < blocks; b++) {
            if (layers[b] == null) {
                continue;
            }
            if (counted && routes[b] != null) {
                for (int t = 0; t < n; t++) {
                    System.arraycopy(routes[b], t * k, chosen, 0, k);
                    placement.countRouted(b, chosen, layers[b]);
                }
            }
            layers[b].close();
        }
    }

    /** The chunk's keys and values as the device stored them (F16-rounded) into the host cache. */
    private void writeBack(KvCache cache, int start, int n) {
        int kw = kvWidth - valueWidth;
        float[] key = new float[kw];
        float[] value = new float[valueWidth];
        for (int t = 0; t < n; t++) {
            for (int b = 0; b < blocks; b++) {
                long at = 4L * ((long) t * blocks + b) * kvWidth;
                MemorySegment.copy(hKvOut, JAVA_FLOAT, at, key, 0, kw);
                MemorySegment.copy(hKvOut, JAVA_FLOAT, at + 4L * kw, value, 0, valueWidth);
                cache.store(b, start + t, key, 0, value, 0);
            }
        }
    }

    /** Buffers for {@code n} tokens attending over up to {@code positions} positions (grown, never shrunk). */
    private void ensureBuffers(int n, int positions) {
        if (n <= cap && positions <= stride) {
            return;
        }
        cu.synchronize(stream);
        chunk.freeAll();
        cap = Math.max(n, cap);
        stride = Math.max(positions, Math.max(stride, 256));
        int slots = cap * k;
        int maxTiles = slots / PrefillKernels.TILE + Math.max(experts, 1) + 1;
        dX = device((long) cap * dim);
        dRope = device((long) cap * ropeDims);
        dNormed = device((long) cap * dim);
        dXq = device(GpuLayerPath.q8Floats(cap * dim));
        dQkv = device((long) cap * qkvWidth);
        dAtt = device((long) cap * attWidth);
        dAttQ = device(GpuLayerPath.q8Floats(cap * attWidth));
        dKvOut = device((long) cap * blocks * kvWidth);
        dRouter = device((long) cap * Math.max(experts, 1));
        dIds = device(slots);
        dW = device(slots);
        dH = device((long) slots * hidden);
        dHq = device(GpuLayerPath.q8Floats(slots * hidden));
        dY = device((long) slots * dim);
        dCpuSum = device((long) cap * dim);
        dTiles = device(3L * maxTiles);
        dSlots = device(slots);
        dDenseTiles = device(3L * (cap / PrefillKernels.TILE + 1));
        dDenseSlots = device(cap);
        dZeros = device(cap);
        dOnes = device(cap);
        dScores = device((long) attention.heads() * cap * stride);
        dLogits = device(vocab);
        hIn = host((long) cap * (dim + ropeDims));
        hNormed = host((long) cap * dim);
        hRoutes = host(2L * slots);
        hTiles = host(3L * maxTiles);
        hSlots = host(slots);
        hCpuSum = host((long) cap * dim);
        hKvOut = host((long) cap * blocks * kvWidth);
        hLogits = host(vocab);
        hDense = host(3L * (cap / PrefillKernels.TILE + 1) + 3L * cap);
    }

    private long device(long floats) {
        return chunk.device(4 * Math.max(1, floats));
    }

    private MemorySegment host(long floats) {
        return chunk.host(4 * Math.max(1, floats));
    }

    /** Frees the prompt buffers (the caller has synchronised the stream). */
    @Override
    public void close() {
        if (staging != null) {
            staging.close();
            staging = null;
        }
        chunk.freeAll();
        fixed.freeAll();
    }
}
