package dev.lazarus.kt.tensor;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A fixed pool of platform threads that splits index ranges into chunks. The calling thread works
 * too, and waits only for chunks that were actually claimed, so nested {@link #forRange} calls (from
 * inside a body) cannot deadlock even when every worker is busy: an unclaimed chunk is simply run
 * by the caller.
 */
public final class Parallel implements AutoCloseable {

    private static final class Shared {
        static final Parallel INSTANCE = new Parallel(Runtime.getRuntime().availableProcessors(), "kt-shared");
    }

    /** Chunks per thread: more than one so that uneven chunks (or a slow thread) balance out. */
    private static final int CHUNKS_PER_THREAD = 4;

    private final int threads;
    private final ExecutorService pool;

    private Parallel(int threads, String name) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be ≥ 1, got " + threads);
        }
        this.threads = threads;
        this.pool = threads == 1 ? null
                : Executors.newFixedThreadPool(threads - 1, Thread.ofPlatform().daemon().name(name + "-", 0).factory());
    }

    /** The process-wide pool with one thread per available processor. */
    public static Parallel shared() {
        return Shared.INSTANCE;
    }

    /** A new pool of {@code n} threads (the caller counts as one); close it when done. */
    public static Parallel ofThreads(int n) {
        return new Parallel(n, "kt-pool");
    }

    public int threads() {
        return threads;
    }

    /** Runs {@code body} over {@code [0, n)} in chunks on the pool's threads and returns when all are done. */
    public void forRange(int n, IntRangeBody body) {
        forRange(n, 1, body);
    }

    /**
     * As {@link #forRange(int, IntRangeBody)}, with chunk boundaries on multiples of {@code grain}
     * (for example to keep a block of rows together).
     */
    public void forRange(int n, int grain, IntRangeBody body) {
        if (n <= 0) {
            return;
        }
        int units = (n + grain - 1) / grain;
        int chunks = Math.min(units, threads * CHUNKS_PER_THREAD);
        if (pool == null || chunks == 1) {
            body.run(0, n);
            return;
        }
        AtomicInteger next = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(chunks);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Runnable worker = () -> {
            for (int c; (c = next.getAndIncrement()) < chunks; ) {
                try {
                    if (failure.get() == null) {
                        int start = (int) ((long) units * c / chunks) * grain;
                        int end = Math.min(n, (int) ((long) units * (c + 1) / chunks) * grain);
                        body.run(start, end);
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                } finally {
                    done.countDown();
                }
            }
        };
        for (int i = 0, helpers = Math.min(threads - 1, chunks - 1); i < helpers; i++) {
            pool.execute(worker);
        }
        worker.run();
        try {
            done.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for parallel work", e);
        }
        Throwable t = failure.get();
        if (t instanceof RuntimeException re) {
            throw re;
        } else if (t instanceof Error err) {
            throw err;
        } else if (t != null) {
            throw new IllegalStateException(t);
        }
    }

    /** Stops the threads of a pool made by {@link #ofThreads}; the shared pool ignores this. */
    @Override
    public void close() {
        if (pool != null && this != Shared.INSTANCE) {
            pool.shutdown();
        }
    }
}
