package dev.lazarus.llamacpp;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendHealth;
import dev.lazarus.backend.api.Redactor;
import dev.lazarus.llamacpp.process.LlamaServerSupervisor;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** The supervisor against {@link FakeLlamaServer}, started with this JVM's own java binary. */
class LlamaServerSupervisionTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String SECRET = "sk-never-logged";

    private final ListAppender<ILoggingEvent> serverLog = new ListAppender<>();
    private final List<ProcessHandle> started = new ArrayList<>();
    private LlamaCppBackend backend;

    @BeforeEach
    void captureLog() {
        serverLog.start();
        ((Logger) LoggerFactory.getLogger("dev.lazarus.llamacpp")).addAppender(serverLog);
    }

    @AfterEach
    void cleanUp() {
        ((Logger) LoggerFactory.getLogger("dev.lazarus.llamacpp")).detachAppender(serverLog);
        if (backend != null) {
            backend.close();
        }
        // Whatever a failed test left behind, by PID.
        started.forEach(p -> p.descendants().forEach(ProcessHandle::destroyForcibly));
        started.forEach(ProcessHandle::destroyForcibly);
    }

    private static Map<String, Object> fakeServerSettings() throws Exception {
        String java = ProcessHandle.current().info().command().orElseThrow();
        String classes = Path.of(FakeLlamaServer.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        Map<String, Object> s = new HashMap<>();
        // The "binary" is the main class: llama-server's flags follow it as the fake's arguments.
        s.put("command-prefix", List.of(java, "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-Xmx32m", "-cp", classes));
        s.put("binary", FakeLlamaServer.class.getName());
        s.put("model", "/models/tiny.gguf");
        s.put("model-name", "tiny");
        s.put("api-key", SECRET);
        s.put("extra-args", List.of("--fake-loading-ms", "700", "--fake-child"));
        s.put("health-poll-interval", "50ms");
        s.put("restart-backoff", "300ms");
        s.put("restart-backoff-max", "2s");
        s.put("stop-grace-period", "3s");
        s.put("startup-timeout", "45s");
        return s;
    }

    @Test
    void startsWaitsForHealthRestartsAfterSigkillAndStopsTheWholeTree() throws Exception {
        backend = new LlamaCppBackend(new BackendConfig("sup-test", "llamacpp", fakeServerSettings()));
        assertThat(backend.health().block().status()).isEqualTo(BackendHealth.Status.LOADING);

        awaitUp();
        long firstPid = backend.serverPid().orElseThrow();
        ProcessHandle first = ProcessHandle.of(firstPid).orElseThrow();
        started.add(first);
        List<ProcessHandle> firstChildren = awaitDescendants(first);
        started.addAll(firstChildren);
        // Orphans can only be cleaned up once the supervisor's periodic scan has seen them.
        await(() -> backend.supervisor().knownDescendants().containsAll(firstChildren), "the supervisor to see the child");
        assertThat(backend.describe().models().getFirst().contextLength()).isEqualTo(512);

        first.destroyForcibly(); // SIGKILL, as the OOM killer would
        await(() -> backend.serverRestarts() == 1 && backend.serverPid().isPresent()
                && backend.serverPid().getAsLong() != firstPid, "a second llama-server");
        long secondPid = backend.serverPid().orElseThrow();
        ProcessHandle second = ProcessHandle.of(secondPid).orElseThrow();
        started.add(second);
        awaitUp();
        // The dead server's child was killed before the restart, not left holding resources.
        await(() -> firstChildren.stream().noneMatch(ProcessHandle::isAlive), "the first server's orphans to be stopped");
        List<ProcessHandle> secondChildren = awaitDescendants(second);
        started.addAll(secondChildren);

        backend.close();
        assertThat(second.isAlive()).isFalse();
        assertThat(secondChildren).noneMatch(ProcessHandle::isAlive);
        assertThat(backend.serverPid()).isEmpty();
        assertThat(backend.health().block().status()).isEqualTo(BackendHealth.Status.DOWN);

        List<String> lines = serverLog.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
        assertThat(lines).anyMatch(l -> l.startsWith("[sup-test] fake llama-server listening on 127.0.0.1:"));
        // The key reached the child through its environment, and never the log.
        assertThat(lines).anyMatch(l -> l.contains("LLAMA_API_KEY set"));
        assertThat(lines).noneMatch(l -> l.contains(SECRET));
        assertThat(lines).anyMatch(l -> l.contains("--alias tiny") && l.contains("-m /models/tiny.gguf"));
    }

    @Test
    void aBinaryThatCannotStartIsDownAndRetriedWithBackoff() throws Exception {
        Map<String, Object> s = fakeServerSettings();
        s.put("command-prefix", List.of());
        s.put("binary", "/nonexistent/llama-server");
        s.put("restart-backoff", "50ms");
        s.put("restart-backoff-max", "100ms");
        backend = new LlamaCppBackend(new BackendConfig("no-binary", "llamacpp", s));
        await(() -> backend.serverRestarts() >= 2, "repeated start attempts");
        BackendHealth health = backend.health().block();
        assertThat(health.status()).isIn(BackendHealth.Status.DOWN, BackendHealth.Status.LOADING);
        await(() -> backend.health().block().detail().contains("could not be started"), "the failure in the health detail");
        assertThat(backend.serverPid()).isEmpty();
    }

    @Test
    void backoffDoublesUpToItsCap() {
        LlamaCppSettings s = LlamaCppSettings.from(new BackendConfig("b", "llamacpp", Map.of("binary", "x",
                "restart-backoff", "300ms", "restart-backoff-max", "2s")));
        BooleanSupplier never = () -> false;
        LlamaServerSupervisor supervisor = new LlamaServerSupervisor("b", s.supervision(), null, null, Redactor.shapesOnly(), never, () -> {},
                Clock.systemUTC());
        assertThat(List.of(0, 1, 2, 3, 4, 30).stream().map(supervisor::backoff).toList()).containsExactly(
                Duration.ofMillis(300), Duration.ofMillis(600), Duration.ofMillis(1200), Duration.ofSeconds(2),
                Duration.ofSeconds(2), Duration.ofSeconds(2));
        supervisor.close();
    }

    private void awaitUp() throws InterruptedException {
        await(() -> backend.health().block().isUp(), "llama-server to be healthy");
    }

    private static List<ProcessHandle> awaitDescendants(ProcessHandle parent) throws InterruptedException {
        await(() -> parent.descendants().findAny().isPresent(), "the fake server's child");
        return parent.descendants().toList();
    }

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("waiting for %s", what).isLessThan(deadline);
            Thread.sleep(50);
        }
    }
}
