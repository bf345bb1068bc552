package dev.lazarus.kt.runtime;

import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.ContextLengthExceededException;
import dev.lazarus.backend.api.SpeculativeDecodingView;
import dev.lazarus.kt.model.Model;
import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.speculative.Drafter;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Runs many generating sequences on one model: a single engine thread admits queued sequences up
 * to {@link EngineOptions#maxSequences()} and loops {@link Scheduler#step()} while any is active.
 * The numeric work of each step runs on the {@link Parallel} pool.
 */
public final class InferenceEngine implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(InferenceEngine.class.getName());

    private final Model model;
    private final EngineOptions options;
    private final Scheduler scheduler;
    private final Drafter drafter;
    private final Queue<Sequence> queue = new ArrayDeque<>();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition work = lock.newCondition();
    private final Thread thread;
    private volatile boolean running = true;

    public InferenceEngine(Model model, EngineOptions options, Parallel parallel) {
        this(model, options, parallel, null);
    }

    /**
     * @param drafter proposes the tokens that speculative decoding verifies, or null (none); the engine closes it. A
     *                model with recurrent state decodes without: its state cannot drop the positions of rejected
     *                draft tokens
     */
    public InferenceEngine(Model model, EngineOptions options, Parallel parallel, Drafter drafter) {
        this.model = model;
        this.options = options;
        if (drafter != null && model.kvLayout().hasRecurrentState()) {
            LOG.log(Level.WARNING, "speculative decoding (" + drafter.type() + ") is off: the model's recurrent state"
                    + " cannot be rolled back past rejected draft tokens");
            drafter.close();
            drafter = null;
        }
        this.drafter = drafter;
        this.scheduler = new Scheduler(model, options, parallel, drafter);
        this.thread = Thread.ofPlatform().name("kt-engine").daemon().start(this::loop);
    }

    public Model model() {
        return model;
    }

    public EngineOptions options() {
        return options;
    }

    /**
     * Queues a sequence that feeds {@code prompt} and then generates until the listener stops it
     * or the context is full.
     *
     * @throws BackendException context-length-exceeded when the prompt leaves no room to generate,
     *                          overloaded when the queue is full, unavailable after close
     */
    public SequenceHandle submit(int[] prompt, SequenceListener listener) {
        if (prompt.length == 0) {
            throw BackendException.invalidRequest("the prompt is empty", "messages");
        }
        if (prompt.length >= options.contextSize()) {
            // the caller knows which request parameter held the prompt
            throw new ContextLengthExceededException(prompt.length, options.contextSize(), null);
        }
        Sequence seq = new Sequence(prompt, listener);
        lock.lock();
        try {
            if (!running) {
                throw BackendException.unavailable("the kt-native engine is shut down");
            }
            // Queued sequences first fill the free slots; beyond those, at most maxQueued may wait.
            int generating = scheduler.activeCount();
            int free = Math.max(0, options.maxSequences() - generating);
            if (queue.size() >= options.maxQueued() + free) {
                throw BackendException.overloaded("the kt-native engine is busy: " + generating
                        + " sequences generating (max-sequences " + options.maxSequences() + ") and "
                        + Math.max(0, queue.size() - free) + " waiting (max-queued " + options.maxQueued() + ")",
                        Duration.ofSeconds(1));
            }
            queue.add(seq);
            work.signal();
        } finally {
            lock.unlock();
        }
        return seq;
    }

    /** Sequences decoding now plus those waiting. */
    public int load() {
        lock.lock();
        try {
            return scheduler.activeCount() + queue.size();
        } finally {
            lock.unlock();
        }
    }

    /** Forward passes run so far. */
    public long steps() {
        return scheduler.steps();
    }

    /** What speculative decoding achieved so far; empty without it. */
    public Optional<SpeculativeDecodingView.Counts> speculation() {
        return drafter == null ? Optional.empty() : Optional.of(scheduler.speculation().counts(drafter.type()));
    }

    private void loop() {
        try {
            while (running) {
                lock.lock();
                try {
                    while (running && scheduler.isIdle() && queue.isEmpty()) {
                        work.await();
                    }
                    dropCancelledWaiting();
                    while (scheduler.hasRoom() && !queue.isEmpty()) {
                        scheduler.admit(queue.poll());
                    }
                } finally {
                    lock.unlock();
                }
                if (running) {
                    scheduler.step();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException | Error e) {
            LOG.log(Level.ERROR, "kt-native engine thread failed", e);
            running = false;
            scheduler.abortAll(e);
        }
        BackendException closed = BackendException.unavailable("the kt-native engine is shut down");
        scheduler.abortAll(closed);
        lock.lock();
        try {
            for (Sequence seq : queue) {
                if (seq.finish()) {
                    seq.listener().failed(closed);
                }
            }
            queue.clear();
        } finally {
            lock.unlock();
        }
        if (drafter != null) {
            drafter.close();
        }
    }

    /**
     * Forgets waiting sequences whose client went away, so they neither hold a queue place (and
     * cause overload refusals) nor get a slot later. Called once per step, under the lock.
     */
    private void dropCancelledWaiting() {
        queue.removeIf(seq -> {
            if (!seq.isCancelled()) {
                return false;
            }
            if (seq.finish()) {
                seq.listener().ended(EndReason.CANCELLED);
            }
            return true;
        });
    }

    /** Whether the engine thread has ended; {@link #close} waits for that at most 30 s. */
    public boolean stopped() {
        return !thread.isAlive();
    }

    @Override
    public void close() {
        lock.lock();
        try {
            running = false;
            work.signalAll();
        } finally {
            lock.unlock();
        }
        try {
            thread.join(Duration.ofSeconds(30));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
