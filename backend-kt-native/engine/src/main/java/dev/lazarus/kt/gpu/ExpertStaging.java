package dev.lazarus.kt.gpu;

import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.gguf.GgufTensorInfo;
import dev.lazarus.kt.model.BlockTensors;
import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.IntPredicate;

/**
 * KTransformers' "layerwise prefill" for the experts placed on the CPU: a long prompt's MoE blocks get all their
 * routed experts' weights (the three 3-D tensors, as stored in the GGUF) copied into one of two device staging
 * buffers on a stream of their own, so block {@code m + 1}'s upload runs while the compute stream works on block
 * {@code m}; the compute stream waits (on the device) for a buffer's upload before its expert kernels, and an upload
 * into a buffer waits for the kernels that read it before. The GPU then computes every routed expert of the block,
 * which for hundreds of tokens beats the CPU reading each expert for its few tokens.
 */
final class ExpertStaging implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(ExpertStaging.class.getName());
    private static final long PAGE = 4096;

    private final CudaDriver cu;
    private final MemorySegment compute;
    private final MemorySegment copies;
    private final GgufFile file;
    private final long[] buffers = new long[2];
    private final MemorySegment[] uploaded = new MemorySegment[2];
    private final MemorySegment[] consumed = new MemorySegment[2];
    private final int[] holds = {-1, -1};
    private final long capacity;
    /** The page-locked ranges of the mapped expert tensors (empty: copies go from pageable memory). */
    private final List<MemorySegment> pinned = new ArrayList<>();

    /** Staging for the expert tensors of {@code blocks} (null entries: dense blocks), both buffers allocated now. */
    ExpertStaging(CudaDriver cu, MemorySegment compute, GgufFile file, BlockTensors.Experts[] blocks) {
        this.cu = cu;
        this.compute = compute;
        this.file = file;
        long widest = 0;
        for (BlockTensors.Experts e : blocks) {
            widest = e == null ? widest : Math.max(widest, bytes(e.routed()));
        }
        this.capacity = widest;
        MemorySegment stream = null;
        try {
            stream = cu.createStream();
            for (int i = 0; i < 2; i++) {
                buffers[i] = cu.malloc(widest);
                uploaded[i] = cu.createEvent();
                consumed[i] = cu.createEvent();
            }
        } catch (RuntimeException | Error e) {
            release(stream);
            throw e;
        }
        this.copies = stream;
        pin(blocks);
    }

    /**
     * Page-locks the mapped expert tensors (read-only registration of the file mapping, page-aligned ranges,
     * merged where they share a page), so their uploads are direct DMA that neither blocks the host thread nor
     * goes through the driver's bounce buffers: measured on an H100, pageable uploads of the bench model's experts
     * ran at about 8 GB/s. Where the driver refuses (no read-only registration, not enough lockable memory) the
     * uploads stay pageable.
     */
    private void pin(BlockTensors.Experts[] blocks) {
        List<long[]> ranges = new ArrayList<>();
        for (BlockTensors.Experts e : blocks) {
            if (e == null) {
                continue;
            }
            for (GgufTensorInfo t : new GgufTensorInfo[] {e.routed().gate(), e.routed().up(), e.routed().down()}) {
                long at = file.data(t).address();
                ranges.add(new long[] {at & -PAGE, (at + t.byteSize() + PAGE - 1) & -PAGE});
            }
        }
        ranges.sort(Comparator.comparingLong(r -> r[0]));
        List<long[]> merged = new ArrayList<>();
        for (long[] r : ranges) {
            if (!merged.isEmpty() && r[0] < merged.getLast()[1]) {
                merged.getLast()[1] = Math.max(merged.getLast()[1], r[1]);
            } else {
                merged.add(r);
            }
        }
        try {
            for (long[] r : merged) {
                MemorySegment range = MemorySegment.ofAddress(r[0]).reinterpret(r[1] - r[0]);
                cu.registerHost(range, CudaDriver.HOST_REGISTER_READ_ONLY);
                pinned.add(range);
            }
        } catch (CudaException e) {
            unpin();
            LOG.log(Level.INFO, "GPU prefill: expert uploads from pageable memory ({0})", e.getMessage());
        }
    }

    /** Whether the uploads are from page-locked memory. */
    boolean pinned() {
        return !pinned.isEmpty();
    }

    private void unpin() {
        for (MemorySegment r : pinned) {
            cu.unregisterHost(r);
        }
        pinned.clear();
    }

    /** Device bytes the two buffers take. */
    long bytes() {
        return 2 * capacity;
    }

    /**
     * Queues the upload of block {@code block}'s experts that {@code staged} names (the CPU tier's: the GPU tier's
     * have their own device copies, which the pointer tables name) into buffer {@code slot} (0 or 1), each at its
     * place in the stored 3-D tensors ({@link #bases}), consecutive experts as one copy, behind the kernels that last
     * read that buffer ({@link #release}). With pageable (mapped) source memory the call returns once the driver has
     * taken the bytes; the compute stream's queued work runs on meanwhile.
     */
    void upload(int slot, int block, BlockTensors.SwiGluTensors t, int experts, IntPredicate staged) {
        cu.waitEvent(copies, consumed[slot]);
        long at = buffers[slot];
        for (GgufTensorInfo m : new GgufTensorInfo[] {t.gate(), t.up(), t.down()}) {
            long each = m.byteSize() / experts;
            MemorySegment source = file.data(m);
            for (int e = 0; e < experts; ) {
                if (!staged.test(e)) {
                    e++;
                    continue;
                }
                int first = e;
                while (e < experts && staged.test(e)) {
                    e++;
                }
                cu.copyToDevice(at + first * each, source.asSlice(first * each), (e - first) * each, copies);
            }
            at += m.byteSize();
        }
        cu.record(uploaded[slot], copies);
        holds[slot] = block;
    }

    /** Buffer {@code slot}'s (gate, up, down) base pointers for tensors {@code t}, the layout {@link #upload} writes. */
    long[] bases(int slot, BlockTensors.SwiGluTensors t) {
        long gate = buffers[slot];
        long up = gate + t.gate().byteSize();
        return new long[] {gate, up, up + t.up().byteSize()};
    }

    /** Makes the compute stream wait (on the device) for buffer {@code slot}'s upload of block {@code block}. */
    void acquire(int slot, int block) {
        if (holds[slot] != block) {
            throw new IllegalStateException("staging buffer " + slot + " holds block " + holds[slot] + ", not " + block);
        }
        cu.waitEvent(compute, uploaded[slot]);
    }

    /** Marks the point after the compute stream's last read of buffer {@code slot} (the next upload waits for it). */
    void release(int slot) {
        cu.record(consumed[slot], compute);
    }

    private static long bytes(BlockTensors.SwiGluTensors t) {
        return t.gate().byteSize() + t.up().byteSize() + t.down().byteSize();
    }

    private void release(MemorySegment stream) {
        for (int i = 0; i < 2; i++) {
            if (buffers[i] != 0) {
                cu.free(buffers[i]);
                buffers[i] = 0;
            }
            if (uploaded[i] != null) {
                cu.destroyEvent(uploaded[i]);
                uploaded[i] = null;
            }
            if (consumed[i] != null) {
                cu.destroyEvent(consumed[i]);
                consumed[i] = null;
            }
        }
        if (stream != null) {
            cu.destroyStream(stream);
        }
    }

    /** Frees the buffers (after the streams are synchronised: waits for the copy stream first). */
    @Override
    public void close() {
        cu.synchronize(copies);
        release(copies);
        unpin();
    }
}
