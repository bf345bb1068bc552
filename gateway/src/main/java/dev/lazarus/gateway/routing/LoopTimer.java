package dev.lazarus.gateway.routing;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import io.netty.util.internal.ThreadExecutorMap;
import java.util.concurrent.TimeUnit;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Timers for the request path: a delay asked on a Netty event loop is a task of that loop (no lock,
 * no other thread woken to arm or cancel it), elsewhere one of Reactor's parallel scheduler. Every
 * request arms and cancels a few (the overall deadline, the answer or first-token limit); on the
 * shared parallel scheduler they were some 3 % of a relayed request's CPU (docs/benchmarks.md#relay-profile).
 * Immediate work and workers are the parallel scheduler's.
 */
public final class LoopTimer implements Scheduler {

    public static final LoopTimer INSTANCE = new LoopTimer();

    private LoopTimer() {
    }

    @Override
    public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
        EventExecutor loop = ThreadExecutorMap.currentExecutor();
        if (loop == null || loop.isShuttingDown()) {
            return Schedulers.parallel().schedule(task, delay, unit);
        }
        Future<?> scheduled = loop.schedule(task, delay, unit);
        return new Disposable() {
            @Override
            public void dispose() {
                scheduled.cancel(false);
            }

            @Override
            public boolean isDisposed() {
                return scheduled.isDone();
            }
        };
    }

    @Override
    public Disposable schedule(Runnable task) {
        return Schedulers.parallel().schedule(task);
    }

    @Override
    public Worker createWorker() {
        return Schedulers.parallel().createWorker();
    }
}
