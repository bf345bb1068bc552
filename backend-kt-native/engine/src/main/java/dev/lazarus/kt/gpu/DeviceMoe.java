package dev.lazarus.kt.gpu;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.model.MoeConfig;
import dev.lazarus.kt.model.SwiGlu;
import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.placement.ExpertCheckout;
import dev.lazarus.kt.placement.ExpertPlacement;
import dev.lazarus.kt.placement.Tier;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The MoE blocks of the GPU layer path routed on the device (moe.cu), the shape of llama.cpp's and KTransformers'
 * GPU paths: the router's top-k runs on the GPU and the chosen experts are found there in a per-block table of
 * device pointers, so a block whose experts are all on the GPU costs three launches and no host round trip. A
 * block with experts on the CPU copies the choice and the normed activation down behind an event; the host waits
 * for that event, starts the CPU experts on its threads, launches the GPU's chosen experts (if any) meanwhile, and
 * adds the CPU experts' weighted sum behind the GPU's, read from pinned host memory.
 *
 * <p>Per token {@link #begin} takes every expert of every MoE block out of the placement (retained, so a
 * re-placement frees nothing the kernels read), rebuilds the pointer table from their tiers and uploads it when it
 * changed; {@link #finish}, after the token's final sync, counts the routing the device chose (for dynamic
 * placement and the tier counters) and lets the experts go. Group-limited routing (deepseek2) is not done here:
 * {@link #routable} says so and the layer path routes those on the host.
 */
final class DeviceMoe implements AutoCloseable {

    private final CudaDriver cu;
    private final MemorySegment stream;
    private final LayerKernels kernels;
    private final ExpertPlacement placement;
    private final Parallel parallel;
    private final MoeConfig moe;
    private final int blocks, experts, k, dim, hidden;
    private final long[] bias;
    private final DeviceAllocations memory;
    private final long dTable, dIds, dWeights, dHq;
    /** Host copies: the table as last uploaded, the routes ([ids | weights] per block) and the CPU experts' sum. */
    private final MemorySegment hTable, hRoutes, hCpuSum;
    private final long[] table;
    private final MemorySegment routed;
    private final ExpertCheckout[] layers;
    private final boolean[] allOnGpu;
    /** Per block, the block types of its GPU experts' gate/up and down matrices (one 3-D tensor each in the GGUF). */
    private final GgmlType[] gateTypes, downTypes;
    private boolean tableValid;

    DeviceMoe(CudaDriver cu, MemorySegment stream, LayerKernels kernels, ExpertPlacement placement, Parallel parallel,
              MoeConfig moe, int blocks, int dim, float[][] selectionBias) {
        this.cu = cu;
        this.memory = new DeviceAllocations(cu);
        this.stream = stream;
        this.kernels = kernels;
        this.placement = placement;
        this.parallel = parallel;
        this.moe = moe;
        this.blocks = blocks;
        this.experts = moe.expertCount();
        this.k = moe.expertsUsed();
        this.dim = dim;
        this.hidden = moe.expertFfnLength();
        this.table = new long[blocks * experts * 3];
        this.layers = new ExpertCheckout[blocks];
        this.allOnGpu = new boolean[blocks];
        this.gateTypes = new GgmlType[blocks];
        this.downTypes = new GgmlType[blocks];
        this.bias = new long[blocks];
        try {
            dTable = device(8L * table.length);
            dIds = device(4L * blocks * k * 2); // ids of block b at b * 2k, its weights right behind them
            dWeights = dIds + 4L * k;
            dHq = device(4L * GpuLayerPath.q8Floats(k * hidden));
            hTable = host(8L * table.length);
            hRoutes = host(4L * blocks * k * 2);
            hCpuSum = host(4L * dim);
            MemorySegment hBias = null;
            for (int b = 0; b < blocks; b++) {
                if (selectionBias[b] != null) {
                    if (hBias == null) {
                        hBias = host(4L * experts);
                    }
                    MemorySegment.copy(selectionBias[b], 0, hBias, JAVA_FLOAT, 0, experts);
                    bias[b] = device(4L * experts);
                    cu.copyToDevice(bias[b], hBias, 4L * experts, stream);
                    cu.synchronize(stream); // hBias is reused for the next block
                }
            }
            routed = cu.createEvent();
        } catch (RuntimeException | Error e) {
            memory.freeAll();
            throw e;
        }
    }

    /** Block {@code b}'s selection bias on the device, or 0. */
    long bias(int b) {
        return bias[b];
    }

    /** Whether the device router computes what {@link dev.lazarus.kt.model.ExpertRouter} does for {@code moe}. */
    static boolean routable(MoeConfig moe) {
        return moe.groupCount() <= 1 && moe.expertCount() <= 1024 && moe.expertFfnLength() % 32 == 0;
    }

    /** Takes every MoE block's experts for one token and puts their device pointers in the table. */
    void begin(boolean[] moeBlocks) {
        if (HybridProfile.ON) {
            HybridProfile.tokenStarted();
        }
        boolean changed = !tableValid;
        for (int b = 0; b < blocks; b++) {
            if (!moeBlocks[b]) {
                continue;
            }
            ExpertCheckout all = placement.checkoutLayer(b);
            layers[b] = all;
            boolean every = true;
            for (int e = 0; e < experts; e++) {
                int at = (b * experts + e) * 3;
                long gate = 0, up = 0, down = 0;
                if (all.tier(e) == Tier.GPU) {
                    CudaExpertTier.CudaExpert x = (CudaExpertTier.CudaExpert) all.device(e);
                    gate = x.gate;
                    up = x.up;
                    down = x.down;
                    gateTypes[b] = x.gateType;
                    downTypes[b] = x.downType;
                } else {
                    every = false;
                }
                if (table[at] != gate || table[at + 1] != up || table[at + 2] != down) {
                    table[at] = gate;
                    table[at + 1] = up;
                    table[at + 2] = down;
                    changed = true;
                }
            }
            allOnGpu[b] = every;
        }
        if (changed) { // the previous token's final sync has passed: no copy still reads hTable
            MemorySegment.copy(table, 0, hTable, JAVA_LONG, 0, table.length);
            cu.copyToDevice(dTable, hTable, 8L * table.length, stream);
            tableValid = true;
        }
    }

    /** Whether every expert of every MoE block is on the GPU for this token (after {@link #begin}). */
    boolean allOnGpu(boolean[] moeBlocks) {
        for (int b = 0; b < blocks; b++) {
            if (moeBlocks[b] && !allOnGpu[b]) {
                return false;
            }
        }
        return true;
    }

    /**
     * Block {@code b}'s routed experts from the router logits at {@code logits}, the normed activation at
     * {@code xn} and its Q8_0 form at {@code xq}: their weighted sum is added to the residual {@code x}. {@code hXn}:
     * the pinned host copy of {@code xn} for the CPU experts ({@code dim} floats).
     */
    void forward(int b, long logits, long xn, long xq, long x, MemorySegment hXn) {
        long ids = dIds + 8L * b * k, weights = ids + 4L * k;
        kernels.moeRoute(logits, bias[b], experts, k, moe.gating() == MoeConfig.Gating.SIGMOID, moe.normalizeWeights(),
                moe.weightsScale(), ids, weights);
        if (allOnGpu[b]) {
            gpuExperts(b, xq, x);
            return;
        }
        cu.copyToHost(hRoutes.asSlice(8L * b * k), ids, 8L * k, stream);
        cu.copyToHost(hXn, xn, 4L * dim, stream);
        cu.record(routed, stream);
        cpuExperts(b, hXn, xq, x);
    }

    /** Block {@code b}'s routed experts that are on the GPU (the table's other entries are skipped), added to x. */
    private void gpuExperts(int b, long xq, long x) {
        long ids = dIds + 8L * b * k, weights = ids + 4L * k, tableAt = dTable + 24L * b * experts;
        kernels.moeGateUp(tableAt, ids, xq, dHq, k, hidden, dim, gateTypes[b]);
        kernels.moeDown(tableAt, ids, weights, dHq, x, dim, hidden, k, downTypes[b]);
    }

    /**
     * The CPU-tier experts of block {@code b}, their weighted sum added to x behind the GPU's own. Once the routes are
     * down the pool starts on the CPU's experts first and this thread launches the GPU's meanwhile, and only when the
     * token chose one of them: host launches queued before the wait for the routes would delay it by their own time,
     * as the GPU finishes the route about when the host has launched it (with flat routing 10 % of the expert bytes
     * on the GPU then saved nothing over 0 %, the launches eating the CPU's gain).
     */
    private void cpuExperts(int b, MemorySegment hXn, long xq, long x) {
        long waitStart = HybridProfile.ON ? System.nanoTime() : 0;
        cu.synchronizeEvent(routed);
        long cpuStart = HybridProfile.ON ? System.nanoTime() : 0;
        ExpertCheckout all = layers[b];
        List<Integer> onCpu = new ArrayList<>();
        for (int j = 0; j < k; j++) {
            if (all.tier(hRoutes.getAtIndex(JAVA_INT, (long) b * 2 * k + j)) != Tier.GPU) {
                onCpu.add(j);
            }
        }
        Runnable gpu = onCpu.size() < k ? () -> gpuExperts(b, xq, x) : null;
        if (onCpu.isEmpty()) {
            gpu.run();
            return;
        }
        float[] xn = new float[dim];
        MemorySegment.copy(hXn, JAVA_FLOAT, 0, xn, 0, dim);
        SwiGlu.Weights[] nets = new SwiGlu.Weights[onCpu.size()];
        float[][][] inputs = new float[onCpu.size()][][];
        for (int c = 0; c < nets.length; c++) {
            nets[c] = all.cpu(hRoutes.getAtIndex(JAVA_INT, (long) b * 2 * k + onCpu.get(c)));
            inputs[c] = new float[][] {xn};
        }
        float[][][] out = SwiGlu.apply(parallel, nets, inputs, gpu);
        if (HybridProfile.ON) {
            HybridProfile.block(cpuStart - waitStart, System.nanoTime() - cpuStart, nets.length);
        }
        float[] sum = new float[dim];
        for (int c = 0; c < nets.length; c++) { // in routing order, as the CPU path sums
            float w = hRoutes.getAtIndex(JAVA_FLOAT, (long) b * 2 * k + k + onCpu.get(c));
            float[] y = out[c][0];
            for (int d = 0; d < dim; d++) {
                sum[d] += y[d] * w;
            }
        }
        // the add reads the pinned sum where it is (unified addressing: a pinned host buffer's address is valid on the
        // device), one node fewer on the GPU's chain to the next block than a copy up; the next block's routes, which
        // the host waits for before it writes here again, come after the add
        MemorySegment.copy(sum, 0, hCpuSum, JAVA_FLOAT, 0, dim);
        kernels.add(x, hCpuSum.address(), dim);
    }

    /** Queues the copy of every block's routes to the host, read by {@link #finish} after the token's sync. */
    void download() {
        cu.copyToHost(hRoutes, dIds, 8L * blocks * k, stream);
    }

    /**
     * After the token's final sync (or a failure): counts what the device routed ({@code counted}: the copy of
     * {@link #download} completed) and releases the experts taken by {@link #begin}.
     */
    void finish(boolean counted) {
        if (HybridProfile.ON && counted) {
            HybridProfile.tokenEnded();
        }
        int[] chosen = new int[k];
        for (int b = 0; b < blocks; b++) {
            if (layers[b] == null) {
                continue;
            }
            if (counted) {
                for (int j = 0; j < k; j++) {
                    chosen[j] = hRoutes.getAtIndex(JAVA_INT, (long) b * 2 * k + j);
                }
                placement.countRouted(b, chosen, layers[b]);
            }
            layers[b].close();
            layers[b] = null;
        }
    }

    private long device(long bytes) {
        return memory.device(bytes);
    }

    private MemorySegment host(long bytes) {
        return memory.host(bytes);
    }

    /** Frees the device memory (the caller has synchronised the stream). */
    @Override
    public void close() {
        finish(false);
        memory.freeAll();
        cu.destroyEvent(routed);
        Arrays.fill(table, 0);
    }
}
