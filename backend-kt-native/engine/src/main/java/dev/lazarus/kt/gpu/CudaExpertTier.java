package dev.lazarus.kt.gpu;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.model.ExpertMatrix;
import dev.lazarus.kt.model.ExpertWeights;
import dev.lazarus.kt.placement.DeviceTier;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Semaphore;

/**
 * The GPU tier on CUDA: expert weights copied as they are (their GGUF blocks: Q8_0, Q4_0, Q4_K, Q5_K, Q6_K)
 * into device memory, and the expert FFN computed there by the kernels of {@code src/main/cuda/experts.cu}
 * (the block types' row dots in {@code quants.cuh}): the activations are
 * quantized once per submission, then per expert gate+up+SiLU in one kernel, the hidden vector
 * quantized, and the down projection. One submission is in flight at a time (the forward thread's);
 * its inputs and outputs go through page-locked staging buffers so the copies run asynchronously
 * while the CPU computes its own experts.
 */
public final class CudaExpertTier implements DeviceTier {

    /**
     * System property: {@code true} makes threads waiting for the GPU sleep (blocking sync) instead of
     * spinning, the driver's default, which takes a core from the CPU experts' worker pool (an experiment,
     * measured by GpuDecodeBenchmark's {@code +blocking} configurations).
     */
    static final String BLOCKING_SYNC_PROPERTY = "lazarus.cuda.blocking-sync";

    private static final int WARPS = 4;
    private static final int THREADS = 32 * WARPS;
    private static final int QK = 32;
    private static final int BLOCK_BYTES = 34;

    private final CudaDriver cu;
    private final int device;
    private final String description;
    private final MemorySegment context;
    private final MemorySegment module;
    private final MemorySegment quantize;
    private final MemorySegment gateUp;
    private final MemorySegment gemv;
    private final MemorySegment stream;
    private final MemorySegment uploadStream;
    private final Semaphore inFlight = new Semaphore(1);
    private final Scratch scratch = new Scratch();
    /** What runs on this tier's context and must stop before it closes (the GPU layer path). */
    private final java.util.List<AutoCloseable> attached = new java.util.concurrent.CopyOnWriteArrayList<>();

    private CudaExpertTier(CudaDriver cu, int ordinal, byte[] ptx) {
        this.cu = cu;
        this.device = cu.device(ordinal);
        this.description = "%s, %d MiB (cuda:%d)".formatted(cu.deviceName(device), cu.deviceMemory(device) >> 20, ordinal);
        if (Boolean.getBoolean(BLOCKING_SYNC_PROPERTY)) {
            cu.setPrimaryContextFlags(device, CudaDriver.SCHED_BLOCKING_SYNC);
        }
        this.context = cu.retainPrimaryContext(device);
        cu.setCurrent(context);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment image = a.allocate(ptx.length + 1L);
            image.copyFrom(MemorySegment.ofArray(ptx));
            this.module = cu.loadModule(image); // PTX must be NUL-terminated; the extra byte is zero
        }
        this.quantize = cu.function(module, "quantize_q8_0");
        this.gateUp = cu.function(module, "gate_up_silu_q");
        this.gemv = cu.function(module, "gemv_q");
        this.stream = cu.createStream();
        this.uploadStream = cu.createStream();
    }

    /** Opens device {@code ordinal} with the kernels of the PTX file {@code kernels}. */
    static CudaExpertTier open(CudaDriver cu, int ordinal, Path kernels) {
        byte[] ptx;
        try {
            ptx = Files.readAllBytes(kernels);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read GPU kernels " + kernels, e);
        }
        return new CudaExpertTier(cu, ordinal, ptx);
    }

    @Override
    public String describe() {
        return description;
    }

    @Override
    public boolean supports(ExpertWeights w) {
        // the kernels compute plain SwiGLU: gpt-oss's biased, clamped experts stay on the CPU tiers; gate and up
        // share one launch, so one type (llama-quantize's mixes give them the same one)
        return w.glu().isPlain() && LayerKernels.quantized(w.gate().type()) && w.up().type() == w.gate().type()
                && LayerKernels.quantized(w.down().type());
    }

    @Override
    public Resident upload(ExpertWeights w) {
        if (!supports(w)) {
            throw new IllegalArgumentException("no GPU kernels for experts of " + w.gate().type());
        }
        cu.setCurrent(context);
        long gate = 0, up = 0, down = 0;
        try {
            gate = copyIn(w.gate());
            up = copyIn(w.up());
            down = copyIn(w.down());
            cu.synchronize(uploadStream);
            return new CudaExpert(gate, up, down, w.gate().type(), w.down().type(), w.gate().rows(), w.gate().cols(),
                    w.bytes());
        } catch (RuntimeException e) {
            for (long p : new long[] {gate, up, down}) {
                if (p != 0) {
                    cu.free(p);
                }
            }
            throw e;
        }
    }

    private long copyIn(ExpertMatrix m) {
        long p = cu.malloc(m.bytes());
        cu.copyToDevice(p, m.data(), m.bytes(), uploadStream);
        return p;
    }

    @Override
    public Pending submit(Resident[] experts, float[][][] inputs) {
        inFlight.acquireUninterruptibly();
        try {
            cu.setCurrent(context);
            CudaExpert first = (CudaExpert) experts[0];
            int dim = first.dim, hidden = first.hidden;
            GgmlType gateType = first.gateType, downType = first.downType;
            int tokens = 0;
            for (int j = 0; j < experts.length; j++) {
                CudaExpert e = (CudaExpert) experts[j];
                if (e.dim != dim || e.hidden != hidden || e.gateType != gateType || e.downType != downType) {
                    throw new IllegalArgumentException("one submission computes experts of one shape and type");
                }
                tokens += inputs[j].length;
            }
            scratch.ensure(tokens, dim, hidden);
            int at = 0;
            for (float[][] group : inputs) {
                for (float[] x : group) {
                    MemorySegment.copy(x, 0, scratch.hostIn, JAVA_FLOAT, (long) at++ * dim * 4, dim);
                }
            }
            cu.copyToDevice(scratch.x, scratch.hostIn, (long) tokens * dim * 4, stream);
            Arena args = Arena.ofConfined();
            try {
                quantize(args, scratch.x, scratch.xq, (long) tokens * dim / QK);
                long dimRow = (long) dim / QK * BLOCK_BYTES, hiddenRow = (long) hidden / QK * BLOCK_BYTES;
                int offset = 0;
                for (int j = 0; j < experts.length; j++) {
                    CudaExpert e = (CudaExpert) experts[j];
                    launchRows(args, gateUp, hidden, inputs[j].length, new KernelArgs(args).pointer(e.gate).pointer(e.up)
                            .pointer(scratch.xq + offset * dimRow).pointer(scratch.h + (long) offset * hidden * 4)
                            .i32(hidden).i32(dim).i32(gateType.id()));
                    offset += inputs[j].length;
                }
                quantize(args, scratch.h, scratch.hq, (long) tokens * hidden / QK);
                offset = 0;
                for (int j = 0; j < experts.length; j++) {
                    CudaExpert e = (CudaExpert) experts[j];
                    launchRows(args, gemv, dim, inputs[j].length, new KernelArgs(args).pointer(e.down)
                            .pointer(scratch.hq + offset * hiddenRow).pointer(scratch.y + (long) offset * dim * 4)
                            .i32(dim).i32(hidden).i32(downType.id()));
                    offset += inputs[j].length;
                }
                cu.copyToHost(scratch.hostOut, scratch.y, (long) tokens * dim * 4, stream);
            } catch (RuntimeException e) {
                args.close();
                throw e;
            }
            int total = tokens;
            return () -> collect(args, inputs, dim, total);
        } catch (RuntimeException e) {
            inFlight.release();
            throw e;
        }
    }

    private float[][][] collect(Arena args, float[][][] inputs, int dim, int tokens) {
        try {
            cu.setCurrent(context);
            cu.synchronize(stream);
            float[][][] out = new float[inputs.length][][];
            int at = 0;
            for (int j = 0; j < inputs.length; j++) {
                out[j] = new float[inputs[j].length][dim];
                for (float[] y : out[j]) {
                    MemorySegment.copy(scratch.hostOut, JAVA_FLOAT, (long) at++ * dim * 4, y, 0, dim);
                }
            }
            return out;
        } finally {
            args.close();
            inFlight.release();
        }
    }

    private void quantize(Arena args, long src, long dst, long blocks) {
        cu.launch(quantize, Math.toIntExact((blocks + WARPS - 1) / WARPS), 1, THREADS, 0, stream,
                new KernelArgs(args).pointer(src).pointer(dst).i64(blocks).segment());
    }

    private void launchRows(Arena args, MemorySegment kernel, int rows, int tokens, KernelArgs params) {
        cu.launch(kernel, (rows + WARPS - 1) / WARPS, tokens, THREADS, 0, stream, params.segment());
    }

    CudaDriver driver() {
        return cu;
    }

    MemorySegment context() {
        return context;
    }

    MemorySegment module() {
        return module;
    }

    /** Closes {@code user} (first) when this tier closes. */
    void attach(AutoCloseable user) {
        attached.add(user);
    }

    @Override
    public void close() {
        for (AutoCloseable user : attached) {
            try {
                user.close();
            } catch (Exception e) {
                throw new IllegalStateException("cannot stop " + user, e);
            }
        }
        attached.clear();
        cu.setCurrent(context);
        scratch.free();
        cu.destroyStream(stream);
        cu.destroyStream(uploadStream);
        cu.unloadModule(module);
        cu.releasePrimaryContext(device);
    }

    /** Device and page-locked host buffers of the forward thread, grown to the largest submission seen. */
    private final class Scratch {
        long x, xq, h, hq, y;
        MemorySegment hostIn, hostOut;
        long tokensCap, dimCap, hiddenCap;

        void ensure(int tokens, int dim, int hidden) {
            if (tokens <= tokensCap && dim <= dimCap && hidden <= hiddenCap) {
                return;
            }
            free();
            tokensCap = Math.max(tokens, 2 * tokensCap);
            dimCap = Math.max(dim, dimCap);
            hiddenCap = Math.max(hidden, hiddenCap);
            long inFloats = tokensCap * dimCap, hiddenFloats = tokensCap * hiddenCap;
            x = cu.malloc(inFloats * 4);
            xq = cu.malloc(inFloats / QK * BLOCK_BYTES);
            h = cu.malloc(hiddenFloats * 4);
            hq = cu.malloc(hiddenFloats / QK * BLOCK_BYTES);
            y = cu.malloc(inFloats * 4);
            hostIn = cu.mallocHost(inFloats * 4);
            hostOut = cu.mallocHost(inFloats * 4);
        }

        void free() {
            for (long p : new long[] {x, xq, h, hq, y}) {
                if (p != 0) {
                    cu.free(p);
                }
            }
            x = xq = h = hq = y = 0;
            if (hostIn != null) {
                cu.freeHost(hostIn);
                cu.freeHost(hostOut);
                hostIn = hostOut = null;
            }
        }
    }

    /**
     * An expert's three matrices in device memory (as stored: gate and up of {@code gateType}, down of
     * {@code downType}); the GPU layer path launches on them.
     */
    final class CudaExpert implements Resident {
        final long gate, up, down;
        final GgmlType gateType, downType;
        final int hidden, dim;
        final long bytes;

        CudaExpert(long gate, long up, long down, GgmlType gateType, GgmlType downType, int hidden, int dim, long bytes) {
            this.gate = gate;
            this.up = up;
            this.down = down;
            this.gateType = gateType;
            this.downType = downType;
            this.hidden = hidden;
            this.dim = dim;
            this.bytes = bytes;
        }

        @Override
        public long bytes() {
            return bytes;
        }

        @Override
        public void free() {
            cu.setCurrent(context);
            cu.free(gate);
            cu.free(up);
            cu.free(down);
        }
    }
}
