package dev.lazarus.kt.gpu;

import java.lang.foreign.MemorySegment;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.function.Predicate;

/**
 * The GPU layer path's token as CUDA graphs, the shape of llama.cpp's CUDA backend: a token whose work is all on
 * the GPU is the same launch sequence at every position (the position, the token's row and its rope table are
 * read from device memory), so it is captured once per KV copy and logits wish, and replayed with one
 * {@code cuGraphLaunch} instead of a driver call per kernel (~100 per token on the skewed benchmark model). The
 * copies in and out stay outside the graph, on the same stream.
 *
 * <p>A graph holds the device pointers it was captured with: {@link #forget} drops the graphs of KV copies that
 * are gone and {@link #clear} all of them when a buffer they use is re-allocated.
 */
final class TokenGraphs implements AutoCloseable {

    private record Key(DeviceKvCaches.Copy copy, boolean logits) {}

    private final CudaDriver cu;
    private final MemorySegment stream;
    private final Map<Key, MemorySegment> execs = new HashMap<>();
    private long captures;

    TokenGraphs(CudaDriver cu, MemorySegment stream) {
        this.cu = cu;
        this.stream = stream;
    }

    /**
     * Queues the token's kernels for {@code copy}: the graph captured from {@code launches} the first time this
     * key is seen, then replayed. {@code launches} must only launch kernels on the stream (no copies, no syncs,
     * no host work whose result depends on the token).
     */
    void run(DeviceKvCaches.Copy copy, boolean logits, Runnable launches) {
        Key key = new Key(copy, logits);
        MemorySegment exec = execs.get(key);
        if (exec == null) {
            exec = capture(launches);
            execs.put(key, exec);
        }
        cu.launchGraph(exec, stream);
    }

    private MemorySegment capture(Runnable launches) {
        cu.beginCapture(stream);
        MemorySegment graph;
        try {
            launches.run();
        } catch (RuntimeException | Error e) {
            try { // leave the stream usable: a stream stays in capture mode until it is ended
                cu.destroyGraph(cu.endCapture(stream));
            } catch (RuntimeException s) {
                e.addSuppressed(s);
            }
            throw e;
        }
        graph = cu.endCapture(stream);
        try {
            captures++;
            return cu.instantiate(graph);
        } finally {
            cu.destroyGraph(graph);
        }
    }

    /** Graphs captured so far (each a first token of its key). */
    long captures() {
        return captures;
    }

    /** Drops the graphs of the KV copies {@code gone} says are gone (their device memory freed or to be). */
    void forget(Predicate<DeviceKvCaches.Copy> gone) {
        for (Iterator<Map.Entry<Key, MemorySegment>> it = execs.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<Key, MemorySegment> e = it.next();
            if (gone.test(e.getKey().copy())) {
                cu.destroyGraphExec(e.getValue());
                it.remove();
            }
        }
    }

    /** Drops every graph (a buffer they read was re-allocated). */
    void clear() {
        forget(c -> true);
    }

    @Override
    public void close() {
        clear();
    }
}
