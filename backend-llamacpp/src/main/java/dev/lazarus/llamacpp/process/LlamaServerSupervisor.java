package dev.lazarus.llamacpp.process;

import dev.lazarus.backend.api.Redactor;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs llama-server as a child process, like llama-swap: starts it, waits until {@code /health}
 * answers 200, restarts it with capped exponential back-off whenever it exits, and stops its whole
 * process tree on {@link #close()}. Its output goes to the log, each line tagged with the backend id.
 *
 * <p>The loop runs on one virtual thread; blocking there (waiting for the process, polling health)
 * costs nothing and stays off the request path.
 */
public final class LlamaServerSupervisor implements AutoCloseable {

    /** Where the child is in its life; the backend's {@code health()} reports from it. */
    public enum State {
        /** Started, not yet answering /health with 200. */
        STARTING,
        /** Healthy once; requests go to it. */
        RUNNING,
        /** Exited or failed to start; waiting out the back-off before the next start. */
        BACKOFF,
        /** Closed; never starts again. */
        STOPPED
    }

    /** The log of llama-server's own output (a logger of its own, so it can be routed or silenced apart). */
    private static final Logger SERVER_LOG = LoggerFactory.getLogger("dev.lazarus.llamacpp.llama-server");
    private static final Logger log = LoggerFactory.getLogger(LlamaServerSupervisor.class);

    private final String backendId;
    private final Supervision settings;
    private final List<String> command;
    private final String apiKey;
    private final Redactor redactor;
    private final BooleanSupplier healthy;
    private final Runnable onReady;
    private final Clock clock;

    /** How often the child's descendants are listed while it runs. */
    public static final long DESCENDANT_SCAN_MS = 500;
    private static final Duration DESCENDANT_SCAN = Duration.ofMillis(DESCENDANT_SCAN_MS);

    private final Object lock = new Object();
    private final Set<ProcessHandle> descendants = ConcurrentHashMap.newKeySet();
    private volatile State state = State.STARTING;
    private volatile Process current;
    private volatile String lastExit;
    private volatile Instant nextStart;
    private volatile int restarts;
    private boolean closed;
    private Thread loop;
    private Thread shutdownHook;

    /**
     * @param healthy  a blocking probe: does llama-server answer {@code /health} with 200 now
     * @param onReady  called each time a start becomes healthy
     */
    public LlamaServerSupervisor(String backendId, Supervision settings, String modelName, String apiKey,
                          Redactor redactor, BooleanSupplier healthy, Runnable onReady, Clock clock) {
        this.backendId = backendId;
        this.settings = settings;
        this.command = LlamaServerCommand.build(settings, modelName);
        this.apiKey = apiKey;
        this.redactor = redactor;
        this.healthy = healthy;
        this.onReady = onReady;
        this.clock = clock;
    }

    public void start() {
        synchronized (lock) {
            if (loop != null || closed) {
                return;
            }
            // A gateway stopped without closing its backends (SIGTERM before the context closed)
            // must not leave llama-server holding the port and the memory.
            shutdownHook = Thread.ofPlatform().unstarted(this::stopChild);
            Runtime.getRuntime().addShutdownHook(shutdownHook);
            loop = Thread.ofVirtual().name("llama-supervisor-" + backendId).start(this::superviseLoop);
        }
    }

    public State state() {
        return state;
    }

    /** The PID of the running child, if one runs. */
    public OptionalLong pid() {
        Process p = current;
        return p != null && p.isAlive() ? OptionalLong.of(p.pid()) : OptionalLong.empty();
    }

    /** The child's descendants seen so far (it is scanned every {@value #DESCENDANT_SCAN_MS} ms). */
    public Set<ProcessHandle> knownDescendants() {
        return Set.copyOf(descendants);
    }

    /** How often the child has been started again after the first start. */
    public int restarts() {
        return restarts;
    }

    /** A sentence for health details: what the child is doing and, after a failure, why. */
    public String describeState() {
        return switch (state) {
            case STARTING -> "starting llama-server" + pid().stream().mapToObj(p -> " (pid " + p + ")").findFirst().orElse("");
            case RUNNING -> "llama-server running" + pid().stream().mapToObj(p -> " (pid " + p + ")").findFirst().orElse("");
            case BACKOFF -> "llama-server " + lastExit + "; next start at " + nextStart;
            case STOPPED -> "llama-server stopped";
        };
    }

    @Override
    public void close() {
        Thread loopThread;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            state = State.STOPPED;
            loopThread = loop;
        }
        if (loopThread != null) {
            loopThread.interrupt();
        }
        stopChild();
        if (loopThread != null) {
            try {
                loopThread.join(Duration.ofSeconds(5));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        removeShutdownHook();
    }

    private void superviseLoop() {
        int failedStarts = 0;
        while (!isClosed()) {
            Process process = launch();
            boolean wasReady = false;
            Instant readyAt = null;
            if (process != null) {
                wasReady = awaitReady(process);
                if (wasReady) {
                    readyAt = clock.instant();
                    moveTo(State.RUNNING);
                    log.info("backend '{}': llama-server (pid {}) is ready at port {}", backendId, process.pid(), settings.port());
                    runQuietly(onReady);
                    waitForExit(process);
                } else if (process.isAlive() && !isClosed()) {
                    log.warn("backend '{}': llama-server (pid {}) was not healthy within {}; stopping it",
                            backendId, process.pid(), settings.startupTimeout());
                    ProcessTree.terminate(process.toHandle(), settings.stopGracePeriod());
                }
                lastExit = process.isAlive() ? "was stopped" : "exited with code " + process.exitValue();
                if (!isClosed()) {
                    killOrphans(); // when closing, close() stops them
                }
            }
            if (isClosed()) {
                break;
            }
            // A long healthy run means the next failure is news, not part of a crash loop.
            if (readyAt != null && Duration.between(readyAt, clock.instant()).compareTo(settings.restartBackoffMax()) >= 0) {
                failedStarts = 0;
            }
            Duration delay = backoff(failedStarts++);
            nextStart = clock.instant().plus(delay);
            moveTo(State.BACKOFF);
            log.warn("backend '{}': llama-server {}; restarting in {}", backendId, lastExit, delay);
            if (!sleep(delay)) {
                break;
            }
            restarts++;
        }
    }

    /** {@code restart-backoff × 2^failures}, capped at {@code restart-backoff-max}. */
    public Duration backoff(int failures) {
        Duration max = settings.restartBackoffMax();
        Duration d = settings.restartBackoff();
        for (int i = 0; i < failures && d.compareTo(max) < 0; i++) {
            d = d.multipliedBy(2);
        }
        return d.compareTo(max) > 0 ? max : d;
    }

    private Process launch() {
        synchronized (lock) {
            if (closed) {
                return null;
            }
            state = State.STARTING;
            ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
            if (apiKey != null) {
                builder.environment().put(LlamaServerCommand.API_KEY_ENV, apiKey);
            }
            try {
                Process process = builder.start();
                current = process;
                log.info("backend '{}': started llama-server (pid {}): {}", backendId, process.pid(),
                        LlamaServerCommand.forLog(command));
                Thread.ofVirtual().name("llama-server-output-" + backendId).start(() -> pumpOutput(process));
                return process;
            } catch (IOException e) {
                // The loop logs this with the back-off it chose.
                lastExit = "could not be started (" + e.getMessage().strip() + ")";
                return null;
            }
        }
    }

    /** Polls /health until 200, the process exits, the startup timeout passes or we are closed. */
    private boolean awaitReady(Process process) {
        Instant deadline = clock.instant().plus(settings.startupTimeout());
        while (process.isAlive() && !isClosed() && clock.instant().isBefore(deadline)) {
            rememberDescendants(process);
            if (healthy.getAsBoolean()) {
                return process.isAlive();
            }
            if (!sleep(settings.healthPollInterval())) {
                return false;
            }
        }
        return false;
    }

    private void waitForExit(Process process) {
        try {
            while (!process.waitFor(DESCENDANT_SCAN.toMillis(), TimeUnit.MILLISECONDS)) {
                rememberDescendants(process);
            }
        } catch (InterruptedException e) {
            // close() interrupts us; it stops the child itself.
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Notes the processes the child started: when the child dies (a wrapper script killed, say),
     * they are orphaned and no longer found through it, yet they may still hold the port.
     */
    private void rememberDescendants(Process process) {
        process.descendants().forEach(descendants::add);
    }

    /** Kills what the last child left behind before the next one starts. */
    private void killOrphans() {
        descendants.removeIf(p -> !p.isAlive());
        if (!descendants.isEmpty()) {
            log.warn("backend '{}': stopping {} process(es) left behind by llama-server: {}", backendId, descendants.size(),
                    descendants.stream().map(ProcessHandle::pid).toList());
            descendants.forEach(orphan -> ProcessTree.terminate(orphan, settings.stopGracePeriod()));
        }
        descendants.clear();
    }

    private void pumpOutput(Process process) {
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                SERVER_LOG.info("[{}] {}", backendId, redactor.redact(line));
            }
        } catch (IOException e) {
            log.debug("backend '{}': llama-server output closed: {}", backendId, e.getMessage());
        }
    }

    private void stopChild() {
        Process p;
        synchronized (lock) {
            closed = true;
            state = State.STOPPED;
            p = current;
        }
        if (p != null) {
            log.info("backend '{}': stopping llama-server (pid {})", backendId, p.pid());
            ProcessTree.terminate(p.toHandle(), settings.stopGracePeriod());
        }
        killOrphans();
    }

    private void removeShutdownHook() {
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException | NullPointerException shuttingDownOrNeverStarted) {
            // the hook runs (or ran) anyway
        }
    }

    /** Changes state unless closed: STOPPED is final. */
    private void moveTo(State next) {
        synchronized (lock) {
            if (!closed) {
                state = next;
            }
        }
    }

    private boolean isClosed() {
        synchronized (lock) {
            return closed;
        }
    }

    /** Sleeps; false when interrupted (closing). */
    private static boolean sleep(Duration d) {
        try {
            Thread.sleep(d);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private void runQuietly(Runnable r) {
        try {
            r.run();
        } catch (RuntimeException e) {
            log.warn("backend '{}': after-start hook failed: {}", backendId, e.toString());
        }
    }
}
