package dev.lazarus.kt.placement;

import dev.lazarus.kt.model.ExpertMatrix;
import dev.lazarus.kt.model.ExpertWeights;
import dev.lazarus.kt.model.SwiGlu;
import dev.lazarus.kt.parallel.Parallel;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A device tier that is really the CPU: "device memory" is an off-heap copy that is zeroed when
 * freed (so computing with a freed expert gives wrong numbers, not old ones), and work runs on its
 * own thread so the caller's CPU experts overlap it as they would a GPU's.
 */
final class CpuStandInDevice implements DeviceTier {

    final AtomicInteger resident = new AtomicInteger();
    final AtomicInteger uploads = new AtomicInteger();
    /** Experts that fit in "device memory"; an upload beyond fails as cuMemAlloc would. */
    volatile int capacity = Integer.MAX_VALUE;
    private final Parallel parallel = Parallel.ofThreads(1);
    private final ExecutorService stream = Executors.newSingleThreadExecutor(Thread.ofPlatform().daemon().factory());

    @Override
    public String describe() {
        return "CPU stand-in";
    }

    @Override
    public boolean supports(ExpertWeights weights) {
        return true;
    }

    @Override
    public Resident upload(ExpertWeights w) {
        if (resident.get() >= capacity) {
            throw new IllegalStateException("out of device memory");
        }
        Arena arena = Arena.ofShared();
        ExpertWeights copy = new ExpertWeights(copy(arena, w.gate()), copy(arena, w.up()), copy(arena, w.down()));
        uploads.incrementAndGet();
        resident.incrementAndGet();
        return new StandIn(copy, arena, w.bytes());
    }

    private static ExpertMatrix copy(Arena arena, ExpertMatrix m) {
        MemorySegment s = arena.allocate(m.bytes(), 64);
        s.copyFrom(m.data());
        return m.withData(s);
    }

    @Override
    public Pending submit(Resident[] experts, float[][][] inputs) {
        SwiGlu.Weights[] nets = new SwiGlu.Weights[experts.length];
        for (int j = 0; j < nets.length; j++) {
            nets[j] = ((StandIn) experts[j]).weights;
        }
        CompletableFuture<float[][][]> f = CompletableFuture.supplyAsync(() -> SwiGlu.apply(parallel, nets, inputs), stream);
        return f::join;
    }

    @Override
    public void close() {
        stream.shutdownNow();
        parallel.close();
    }

    private final class StandIn implements Resident {
        final SwiGlu.Weights weights;
        final ExpertWeights copy;
        final Arena arena;
        final long bytes;
        final AtomicInteger frees = new AtomicInteger();

        StandIn(ExpertWeights copy, Arena arena, long bytes) {
            this.copy = copy;
            this.weights = copy.cpu();
            this.arena = arena;
            this.bytes = bytes;
        }

        @Override
        public long bytes() {
            return bytes;
        }

        @Override
        public void free() {
            if (frees.incrementAndGet() != 1) {
                throw new IllegalStateException("freed twice");
            }
            copy.gate().data().fill((byte) 0);
            copy.up().data().fill((byte) 0);
            copy.down().data().fill((byte) 0);
            resident.decrementAndGet();
        }
    }
}
