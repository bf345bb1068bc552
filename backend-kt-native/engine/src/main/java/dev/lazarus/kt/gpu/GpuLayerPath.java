package dev.lazarus.kt.gpu;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.gguf.GgufTensorInfo;
import dev.lazarus.kt.model.BlockTensors;
import dev.lazarus.kt.model.ExpertRouter;
import dev.lazarus.kt.model.ForwardBatch;
import dev.lazarus.kt.model.KvCache;
import dev.lazarus.kt.model.Model;
import dev.lazarus.kt.model.ModelConfig;
import dev.lazarus.kt.model.Rope;
import dev.lazarus.kt.model.SwiGlu;
import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.placement.ExpertCheckout;
import dev.lazarus.kt.placement.ExpertPlacement;
import dev.lazarus.kt.placement.Tier;
import dev.lazarus.kt.tensor.WeightMatrix;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * The GPU layer path: whole decode passes on the GPU except the experts placed on the CPU. Per token the
 * embedding row and the rope table go up once; every block's norms, attention ({@link GqaDeviceAttention}:
 * q/k/v, QK-norm, rope, attention over the device KV cache, output projection; or deepseek2's latent
 * attention, {@link MlaDeviceAttention}), residual, FFN norm and then either a dense SwiGLU FFN or the router
 * logits run on one stream while the residual stream stays in device memory. The router's top-k and the routed
 * experts run on the device too ({@link DeviceMoe}): a token whose experts are all on the GPU is one CUDA graph
 * launch ({@link TokenGraphs}; the kernels read the position from device memory, so one captured graph serves
 * every token of a sequence) with a single sync at its end (logits and new K/V down); a block with experts on the CPU waits only
 * for its routes and normed activation to come down, computes those experts on the host threads while the GPU
 * computes its own, and adds their weighted sum behind them. Group-limited routing (deepseek2) is still done on
 * the host: per such block the normed activation and the router logits come down (one copy, one stream sync),
 * the host routes (the CPU path's {@link ExpertRouter}) and launches the shared expert and the GPU experts.
 *
 * <p>A run of one sequence's consecutive positions in a batch (a prompt chunk) is computed as a batch by
 * {@link GpuPrefill} where the model's blocks have batched kernels; other tokens one by one. The host {@link KvCache}
 * is kept complete, so the CPU path could take over any time. Not reentrant (like {@link Model#forward}).
 */
public final class GpuLayerPath implements Model.ForwardPath, AutoCloseable {

    private static final int QK = 32;

    private final Model model;
    private final ExpertPlacement placement;
    private final Parallel parallel;
    private final CudaDriver cu;
    private final MemorySegment context;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment stream;
    private final LayerKernels kernels;
    private final DeviceWeights weights;
    private final DeviceKvCaches kv;
    private final WeightMatrix embedding;
    private final Rope rope;
    private final ExpertRouter[] routers;
    private final DeviceAttention attention;
    /** The MoE blocks routed on the device; null when the router's kind needs the host (group-limited routing). */
    private final DeviceMoe moe;
    private final boolean[] moeBlocks;
    private final int blocks, dim, experts, hidden, vocab, ropeDims, keyWidth, kvWidth;
    private final float eps;
    private final DeviceAllocations memory;
    private final TokenGraphs graphs;
    /** The batched prompt pass, or null when the model has parts without batched kernels (prompts token by token). */
    private final GpuPrefill prefill;
    // device buffers; x is the residual stream, rope and then the position (an int) sit right behind it (one
    // upload per token), the router logits right behind the normed activation (one download per MoE block)
    private final long dX, dRope, dPos, dNormed, dRouterLogits, dXq, dH, dHq, dKvOut, dLogits;
    private long dScores;
    private int scoreStride;
    private final MemorySegment hTokenIn, hNormed, hCpuSum, hKvOut, hLogits;
    private boolean closed;

    private GpuLayerPath(Model model, GgufFile file, ExpertPlacement placement, CudaExpertTier tier, int sequences) {
        ModelConfig c = model.config();
        this.model = model;
        this.placement = placement;
        this.parallel = model.parallel();
        this.cu = tier.driver();
        this.memory = new DeviceAllocations(cu);
        this.context = tier.context();
        cu.setCurrent(context);
        this.blocks = c.blockCount();
        this.dim = c.embeddingLength();
        this.experts = c.moe() == null ? 0 : c.moe().expertCount();
        this.ropeDims = c.rope().dimensions();
        this.eps = c.rmsEps();
        this.embedding = model.embedding();
        this.vocab = model.vocabSize();
        this.rope = new Rope(c.rope());
        this.routers = new ExpertRouter[blocks];
        this.moeBlocks = new boolean[blocks];
        float[][] biases = new float[blocks][];
        for (int b = 0; b < blocks; b++) {
            BlockTensors.Experts routed = model.tensors().block(b).experts();
            moeBlocks[b] = routed != null;
            biases[b] = routed != null && routed.selectionBias() != null ? readF32(file, routed.selectionBias()) : null;
            routers[b] = moeBlocks[b] ? new ExpertRouter(c.moe(), biases[b]) : null;
        }
        this.stream = cu.createStream();
        this.kernels = new LayerKernels(cu, tier.module(), stream, arena);
        DeviceWeights w = null;
        DeviceMoe m = null;
        try {
            w = new DeviceWeights(cu, stream, file, model.tensors());
            attention = c.mla() != null ? new MlaDeviceAttention(c, model.tensors(), w, kernels, this::device)
                    : new GqaDeviceAttention(c, model.tensors(), w, kernels, this::device);
            this.keyWidth = attention.keyWidth();
            this.kvWidth = keyWidth + attention.valueWidth();
            this.hidden = Math.max(experts == 0 ? 0 : c.moe().expertFfnLength(), w.widestFfn());
            dX = device(dim + ropeDims + 1);
            dRope = dX + 4L * dim;
            dPos = dRope + 4L * ropeDims;
            dNormed = device(dim + experts);
            dRouterLogits = dNormed + 4L * dim;
            dXq = device(q8Floats(dim));
            dH = device(hidden);
            dHq = device(q8Floats(hidden));
            dKvOut = device((long) blocks * kvWidth);
            dLogits = device(vocab);
            hTokenIn = host(dim + ropeDims + 1);
            hNormed = host(dim + experts);
            hCpuSum = host(dim);
            hKvOut = host((long) blocks * kvWidth);
            hLogits = host(vocab);
            if (placement != null && experts > 0 && DeviceMoe.routable(c.moe())) {
                m = new DeviceMoe(cu, stream, kernels, placement, parallel, c.moe(), blocks, dim, biases);
            }
        } catch (RuntimeException | Error e) {
            memory.freeAll();
            if (w != null) {
                w.close();
            }
            cu.destroyStream(stream);
            arena.close();
            throw e;
        }
        this.weights = w;
        this.moe = m;
        this.kv = new DeviceKvCaches(cu, stream, blocks, keyWidth, kvWidth - keyWidth, Math.max(1, sequences));
        this.graphs = new TokenGraphs(cu, stream);
        this.prefill = GpuPrefill.create(model, file, cu, stream, tier.module(), arena, kernels, weights, attention, moe,
                kv, placement);
    }

    /**
     * Puts the model's layers on {@code tier}'s GPU: from the next forward pass on, {@code model} computes
     * through this path. {@code sequences}: how many sequences keep a device KV cache at once. {@code placement}
     * is null for a dense model (no experts to place).
     * Throws {@link IllegalArgumentException} when the model has parts the GPU kernels cannot run.
     */
    static GpuLayerPath install(Model model, GgufFile file, ExpertPlacement placement, CudaExpertTier tier,
                                int sequences) {
        String why = DeviceWeights.unsupported(model.tensors(), model.config());
        if (why != null) {
            throw new IllegalArgumentException(why);
        }
        GpuLayerPath path = new GpuLayerPath(model, file, placement, tier, sequences);
        tier.attach(path);
        model.useForwardPath(path);
        return path;
    }

    /** Bytes of non-expert weights copied to the device. */
    long weightBytes() {
        return weights.bytes();
    }

    @Override
    public synchronized float[][] forward(ForwardBatch batch) {
        if (closed) {
            throw new IllegalStateException("the GPU layer path is closed");
        }
        cu.setCurrent(context);
        float[][] logits = new float[batch.size()][];
        for (int i = 0; i < batch.size(); ) {
            int run = prefill == null ? 1 : promptRun(batch, i);
            if (run > 1) {
                prefill.forward(batch.tokens(), batch.positions(), batch.caches()[i], batch.wantLogits(), i, run, logits);
            } else {
                logits[i] = token(batch.tokens()[i], batch.positions()[i], batch.caches()[i], batch.wantLogits()[i]);
            }
            i += run;
        }
        return logits;
    }

    /** Whether prompts run batched ({@link GpuPrefill}); false: token by token, as {@link GpuPrefill#unsupported} says. */
    boolean batchesPrompts() {
        return prefill != null;
    }

    /** How many tokens from {@code i} on are one sequence's consecutive positions (a prompt run for {@link GpuPrefill}). */
    static int promptRun(ForwardBatch batch, int i) {
        int j = i + 1;
        while (j < batch.size() && batch.caches()[j] == batch.caches()[i]
                && batch.positions()[j] == batch.positions()[j - 1] + 1) {
            j++;
        }
        return j - i;
    }

    private float[] token(int token, int position, KvCache cache, boolean wantLogits) {
        if (token < 0 || token >= embedding.rows()) {
            throw new IllegalArgumentException("token id " + token + " outside vocabulary of " + embedding.rows());
        }
        DeviceKvCaches.Copy copy = kv.prepare(cache, position);
        ensureScores(kv.maxCapacity());
        float[] x = new float[dim];
        embedding.dequantizeRow(token, x, 0);
        MemorySegment.copy(x, 0, hTokenIn, JAVA_FLOAT, 0, dim);
        MemorySegment.copy(rope.table(position), 0, hTokenIn, JAVA_FLOAT, 4L * dim, ropeDims);
        hTokenIn.set(JAVA_INT, 4L * (dim + ropeDims), position);
        cu.copyToDevice(dX, hTokenIn, 4L * (dim + ropeDims + 1), stream);
        List<ExpertCheckout> held = new ArrayList<>(blocks);
        boolean done = false;
        try {
            if (moe != null) {
                moe.begin(moeBlocks);
            }
            if (allOnGpu()) {
                graphs.forget(c -> !kv.live(c));
                graphs.run(copy, wantLogits, () -> launches(copy, wantLogits, held));
            } else {
                launches(copy, wantLogits, held);
            }
            if (wantLogits) {
                cu.copyToHost(hLogits, dLogits, 4L * vocab, stream);
            }
            cu.copyToHost(hKvOut, dKvOut, 4L * blocks * kvWidth, stream);
            if (moe != null) {
                moe.download();
            }
            cu.synchronize(stream);
            done = true;
        } catch (RuntimeException | Error e) {
            try {
                cu.synchronize(stream); // the experts may still be read: wait before the checkouts let go
            } catch (RuntimeException s) {
                e.addSuppressed(s);
            }
            throw e;
        } finally {
            for (ExpertCheckout c : held) {
                c.close();
            }
            if (moe != null) {
                moe.finish(done);
            }
        }
        writeBack(cache, position);
        copy.valid = position + 1;
        if (!wantLogits) {
            return null;
        }
        float[] logits = new float[vocab];
        MemorySegment.copy(hLogits, JAVA_FLOAT, 0, logits, 0, vocab);
        return logits;
    }

    /** The token's blocks and, when wanted, its logits at dLogits (those blocks with CPU work wait for it). */
    private void launches(DeviceKvCaches.Copy copy, boolean wantLogits, List<ExpertCheckout> held) {
        for (int b = 0; b < blocks; b++) {
            block(b, copy, held);
        }
        if (wantLogits) {
            kernels.rmsNorm(dX, weights.outputNorm, dNormed, dXq, dim, eps);
            kernels.matvec(weights.output, dNormed, dXq, dLogits, 1f, false);
        }
    }

    /**
     * Whether this token is kernels only (no expert on the CPU, no host routing): then it runs as a CUDA graph.
     * Call after {@link DeviceMoe#begin}.
     */
    private boolean allOnGpu() {
        return experts == 0 || moe != null && moe.allOnGpu(moeBlocks);
    }

    /**
     * Block {@code b}: attention and residual, then a dense FFN on the device, or the router logits, which are
     * copied to the host with the normed activation, and the experts.
     */
    private void block(int b, DeviceKvCaches.Copy copy, List<ExpertCheckout> held) {
        DeviceWeights.Block w = weights.block(b);
        kernels.rmsNorm(dX, w.attnNorm(), dNormed, dXq, dim, eps);
        attention.forward(b, dNormed, dXq, dX, copy, dKvOut + 4L * b * kvWidth, dRope, dPos, dScores, scoreStride);
        kernels.rmsNorm(dX, w.ffnNorm(), dNormed, dXq, dim, eps);
        if (w.router() == null) {
            swiGlu(w.ffn());
            return;
        }
        kernels.matvec(w.router(), dNormed, dXq, dRouterLogits, 1f, false);
        if (moe != null) {
            if (w.ffn() != null) {
                swiGlu(w.ffn()); // the shared expert
            }
            moe.forward(b, dRouterLogits, dNormed, dXq, dX, hNormed);
            return;
        }
        cu.copyToHost(hNormed, dNormed, 4L * (dim + experts), stream);
        experts(b, held, w.ffn());
    }

    /** {@code x += down(silu(gate · xn) * up · xn)} on the device, from the normed activation (or its Q8_0 form). */
    private void swiGlu(DeviceWeights.SwiGluMatrices ffn) {
        kernels.gateUpSilu(ffn.gate(), ffn.up(), dNormed, dXq, dH);
        if (LayerKernels.quantized(ffn.down().type())) {
            kernels.quantize(dH, dHq, ffn.hidden());
        }
        kernels.matvec(ffn.down(), dH, dHq, dX, 1f, true);
    }

    /**
     * For routers {@link DeviceMoe} does not take (group-limited routing): routes the token on the host,
     * launches the shared expert (weight 1, when there is one), starts the CPU experts, launches the GPU experts
     * (each adds weight × output to the residual) meanwhile and adds the CPU experts' weighted sum behind them. The
     * checkout is held until the token's final sync: the kernels read the experts' device memory until then.
     */
    private void experts(int b, List<ExpertCheckout> held, DeviceWeights.SwiGluMatrices shared) {
        cu.synchronize(stream);
        float[] xn = new float[dim];
        float[] logits = new float[experts];
        MemorySegment.copy(hNormed, JAVA_FLOAT, 0, xn, 0, dim);
        MemorySegment.copy(hNormed, JAVA_FLOAT, 4L * dim, logits, 0, experts);
        ExpertRouter.Route route = routers[b].route(logits);
        ExpertCheckout chosen = placement.checkout(b, route.experts());
        held.add(chosen);
        if (shared != null) {
            swiGlu(shared);
        }
        List<Integer> onCpu = new ArrayList<>();
        for (int j = 0; j < chosen.size(); j++) {
            if (chosen.tier(j) != Tier.GPU) {
                onCpu.add(j);
            }
        }
        // launched by this thread once the pool has the CPU's experts (DeviceMoe does the same for device routing)
        Runnable gpu = onCpu.size() == chosen.size() ? null : () -> {
            for (int j = 0; j < chosen.size(); j++) {
                if (chosen.tier(j) == Tier.GPU) {
                    CudaExpertTier.CudaExpert e = (CudaExpertTier.CudaExpert) chosen.device(j);
                    kernels.gateUpSilu(e.gate, e.up, dXq, dH, e.hidden, e.dim, e.gateType);
                    kernels.quantize(dH, dHq, e.hidden);
                    kernels.matvec(new DeviceMatrix(e.downType, e.down, e.dim, e.hidden), 0, dHq, dX,
                            route.weights()[j], true);
                }
            }
        };
        if (onCpu.isEmpty()) {
            gpu.run();
            return;
        }
        SwiGlu.Weights[] nets = new SwiGlu.Weights[onCpu.size()];
        float[][][] inputs = new float[onCpu.size()][][];
        for (int c = 0; c < nets.length; c++) {
            nets[c] = chosen.cpu(onCpu.get(c));
            inputs[c] = new float[][] {xn};
        }
        float[][][] out = SwiGlu.apply(parallel, nets, inputs, gpu);
        float[] sum = new float[dim];
        for (int c = 0; c < nets.length; c++) { // in routing order, as the CPU path sums
            float w = route.weights()[onCpu.get(c)];
            float[] y = out[c][0];
            for (int d = 0; d < dim; d++) {
                sum[d] += y[d] * w;
            }
        }
        MemorySegment.copy(sum, 0, hCpuSum, JAVA_FLOAT, 0, dim);
        kernels.add(dX, hCpuSum.address(), dim); // read where it is pinned, as DeviceMoe does; the next write follows a sync
    }

    /** The position's keys and values as the device stored them (F16-rounded) into the host cache. */
    private void writeBack(KvCache cache, int position) {
        int kw = keyWidth;
        float[] k = new float[kw];
        float[] v = new float[kvWidth - kw];
        for (int b = 0; b < blocks; b++) {
            MemorySegment.copy(hKvOut, JAVA_FLOAT, 4L * b * kvWidth, k, 0, kw);
            MemorySegment.copy(hKvOut, JAVA_FLOAT, 4L * (b * kvWidth + kw), v, 0, v.length);
            cache.store(b, position, k, 0, v, 0);
        }
    }

    private void ensureScores(int positions) {
        if (positions > scoreStride) {
            if (dScores != 0) {
                graphs.clear(); // they read the old buffer
                cu.synchronize(stream);
                memory.free(dScores);
                dScores = 0;
            }
            dScores = device((long) attention.heads() * positions);
            scoreStride = positions;
        }
    }

    private static float[] readF32(GgufFile file, GgufTensorInfo t) {
        if (t.type() != GgmlType.F32) {
            throw new IllegalArgumentException(t.name() + " is " + t.type() + ", expected F32");
        }
        float[] out = new float[Math.toIntExact(t.elements())];
        MemorySegment.copy(file.data(t), JAVA_FLOAT.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN), 0, out, 0, out.length);
        return out;
    }

    /** Floats of device memory that hold {@code values} as Q8_0 blocks (34 bytes per 32 values), rounded up. */
    static long q8Floats(int values) {
        return ((long) values / QK * 34 + 3) / 4;
    }

    private long device(long floats) {
        return memory.device(4 * floats);
    }

    private MemorySegment host(long floats) {
        return memory.host(4 * floats);
    }

    /** Hands the model back to the CPU blocks and frees the device memory of this path. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        model.useForwardPath(null);
        cu.setCurrent(context);
        cu.synchronize(stream);
        graphs.close();
        if (prefill != null) {
            prefill.close();
        }
        if (moe != null) {
            moe.close();
        }
        memory.freeAll();
        weights.close();
        kv.close();
        cu.destroyStream(stream);
        arena.close();
    }
}
