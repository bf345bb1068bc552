package dev.lazarus.kt.matrix;

import dev.lazarus.kt.quant.q4k.Q4KNativePacked;
import dev.lazarus.kt.quant.q8_0.Q8_0NativePacked;
import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.NativeKernels;
import dev.lazarus.kt.tensor.RowKernel;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.ref.Reference;
import java.util.Arrays;

/**
 * A {@link RowKernel} in the native library ({@link NativeKernels}): one downcall per row range (decode) or per row
 * range and batch (prefill, {@link #matmul}); every product bit-identical to the Java kernel of the same
 * {@link NativeKernels.Kernel}. The threads stay Java's: the pool calls this per row range.
 */
public final class NativeRowKernel implements RowKernel {

    /** Per-thread output and activation-address scratch of a batch, grown on demand. */
    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    private static final class Scratch {
        float[] out = new float[0];
        long[] addresses = new long[0];
    }

    final NativeKernels.Kernel kernel;
    private final MethodHandle rows;

    private NativeRowKernel(NativeKernels.Kernel kernel, MethodHandle rows) {
        this.kernel = kernel;
        this.rows = rows;
    }

    /** The kernel for {@code type}'s ggml blocks with the float fold named, on the host's best instruction set. */
    static NativeRowKernel of(NativeKernels.Kernel kernel) {
        return of(kernel, NativeKernels.best().orElseThrow());
    }

    /** The same on a given instruction set (tests run every one the host has). */
    static NativeRowKernel of(NativeKernels.Kernel kernel, NativeKernels.Isa isa) {
        return new NativeRowKernel(kernel, NativeKernels.rows(isa));
    }

    @Override
    public float dot(MemorySegment w, long offset, Activation x, int cols) {
        float[] out = new float[1];
        if (packed()) {
            // a row of the 16-row layout is read with its group: the library takes the whole matrix and the row
            long rowBytes = kernel == NativeKernels.Kernel.Q8_0_16
                    ? Q8_0NativePacked.rowBytes(cols) : Q4KNativePacked.rowBytes(cols);
            int row = (int) (offset / rowBytes);
            call(w, rowBytes, row, row + 1, cols, x.nativeAddresses(), 1, out, 0, row);
        } else {
            call(w.asSlice(offset), 0, 0, 1, cols, x.nativeAddresses(), 1, out, 0, 0);
        }
        return out[0];
    }

    /** Whether this kernel reads a 16-row layout ({@link Q4KNativePacked}, {@link Q8_0NativePacked}). */
    boolean packed() {
        return kernel == NativeKernels.Kernel.Q4K16_GEMV || kernel == NativeKernels.Kernel.Q4K16_GEMM
                || kernel == NativeKernels.Kernel.Q8_0_16;
    }

    @Override
    public void dotRows(MemorySegment w, long rowBytes, Activation x, int cols, float[] out, int rowStart, int rowEnd) {
        call(w, rowBytes, rowStart, rowEnd, cols, x.nativeAddresses(), 1, out, 0, 0);
    }

    @Override
    public void dotBatch(MemorySegment w, long offset, Activation[] xs, int from, int to, int cols, float[][] outs, int row) {
        for (int b = from; b < to; b++) {
            outs[b][row] = dot(w, offset, xs[b], cols);
        }
    }

    /**
     * outs[b][r] for rows [rowStart, rowEnd) and the first {@code count} of {@code xs}, in the orders of
     * {@link KernelMatrix}'s batches: every vector in {@code tiled}'s where it is not null and the batch has
     * {@link KernelTable#TILED_MIN_BATCH}; else the first {@code count - count % 4} in {@code group}'s where it is not
     * null and the rest in {@code single}'s.
     */
    static void matmul(MemorySegment w, long rowBytes, int cols, NativeRowKernel single, NativeRowKernel group,
                       NativeRowKernel tiled, Activation[] xs, int count, float[][] outs, int rowStart, int rowEnd) {
        int n = rowEnd - rowStart;
        Scratch s = SCRATCH.get();
        if (s.out.length < count * n) {
            s.out = new float[count * n];
        }
        if (s.addresses.length < count) {
            s.addresses = new long[count];
        }
        for (int b = 0; b < count; b++) {
            s.addresses[b] = xs[b].nativeAddresses()[0];
        }
        NativeRowKernel batch = tiled != null && count >= KernelTable.TILED_MIN_BATCH ? tiled : single;
        int grouped = group == null || batch == tiled ? 0 : count - count % GROUP;
        if (grouped > 0) {
            group.call(w, rowBytes, rowStart, rowEnd, cols, s.addresses, grouped, s.out, n, rowStart);
        }
        if (grouped < count) {
            long[] rest = grouped == 0 ? s.addresses : Arrays.copyOfRange(s.addresses, grouped, count);
            // the rest's outputs after the grouped ones', n apart
            batch.callAt(w, rowBytes, rowStart, rowEnd, cols, rest, count - grouped, s.out, grouped * n, n, rowStart);
        }
        for (int b = 0; b < count; b++) {
            System.arraycopy(s.out, b * n, outs[b], rowStart, n);
        }
    }

    private void call(MemorySegment w, long rowBytes, int r0, int r1, int cols, long[] acts, int nvec, float[] out,
                      int outStride, int outBase) {
        callAt(w, rowBytes, r0, r1, cols, acts, nvec, out, 0, outStride, outBase);
    }

    private void callAt(MemorySegment w, long rowBytes, int r0, int r1, int cols, long[] acts, int nvec, float[] out,
                        int outAt, int outStride, int outBase) {
        MemorySegment weights = unscoped(w);
        try {
            rows.invokeExact(kernel.ordinal(), weights, rowBytes, r0, r1, cols, MemorySegment.ofArray(acts), nvec,
                    MemorySegment.ofArray(out).asSlice(4L * outAt), outStride, outBase);
        } catch (Throwable t) {
            throw new IllegalStateException("native kernel " + kernel + " failed", t);
        } finally {
            // an Arena.ofAuto segment (the repacked RAM copies) must not be collected while the library reads it
            Reference.reachabilityFence(w);
        }
    }

    /**
     * Native weights as a bare address: passing their own segment would acquire and release its shared arena's
     * session on every call, an atomic on one cache line that all threads' calls contend for (at 16 threads the
     * top item of a decode profile). The caller keeps {@code w} reachable over the call; that its arena is open is
     * checked by a read, as any access to it does. Heap segments (tests) pass as they are.
     */
    private MemorySegment unscoped(MemorySegment w) {
        if (!w.isNative()) {
            return w;
        }
        if (!w.scope().isAlive()) {
            throw new IllegalStateException("native kernel " + kernel + ": the weights' arena is closed");
        }
        return MemorySegment.ofAddress(w.address());
    }

    @Override
    public String toString() {
        return "native " + kernel;
    }
}
