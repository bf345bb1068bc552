package dev.lazarus.gateway.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendFactories;
import dev.lazarus.gateway.resilience.HealthMonitor;
import dev.lazarus.gateway.resilience.HealthProperties;
import dev.lazarus.gateway.routing.BackendRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/** The start-up line: what serves, where, on which kernels, with which JIT; logged once loading is over. */
@ExtendWith(OutputCaptureExtension.class)
class StartupSummaryTest {

    @Test
    void theEmbeddedEngineIsSummedUpInOneLineOnceItIsUp(CapturedOutput output) throws InterruptedException {
        BackendFactories factories = BackendFactories.load();
        try (BackendRegistry backends = BackendRegistry.create(List.of(
                new BackendConfig("embedded", "kt-native", Map.of("model", "classpath:models/lazarus-tiny-moe.gguf",
                        "threads", 1, "context-size", 64)),
                new BackendConfig("llama", "llamacpp", Map.of("url", "http://127.0.0.1:9", "model-name", "big"))),
                factories::create)) {
            HealthMonitor monitor = new HealthMonitor(backends, new HealthProperties(Duration.ofMillis(100), Duration.ofSeconds(2)));
            monitor.start();
            try (StartupSummary summary = new StartupSummary(backends, monitor, "C2", Duration.ofMinutes(5))) {
                summary.logWhenSettled(StartupSummary.url("127.0.0.1", "8400"));
                long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
                while (!output.getOut().contains("Lazarus ready") && System.nanoTime() < deadline) {
                    Thread.sleep(50);
                }
            } finally {
                monitor.stop();
            }
        }
        List<String> lines = output.getOut().lines().filter(l -> l.contains("Lazarus ready")).toList();
        assertThat(lines).hasSize(1);
        assertThat(lines.getFirst()).contains("Lazarus ready on http://127.0.0.1:8400/v1 (JIT: C2): ")
                .containsPattern("embedded \\(kt-native lazarus-tiny-moe\\): UP, CPU, Java kernels \\(java-vector-(128|256|512): F32,F16\\)")
                .contains("; llama (llamacpp big): DOWN (");
    }

    @Test
    void theLineSaysWhoMayCallAndABindBeyondLoopbackWithoutKeysWarns(CapturedOutput output) {
        try (BackendRegistry none = BackendRegistry.create(List.of(), c -> { throw new AssertionError(); });
                StartupSummary summary = new StartupSummary(none, null, "C2", Duration.ofMinutes(5))) {
            summary.access("127.0.0.1", 2, false);
            assertThat(summary.line("http://127.0.0.1:8400/v1", "ready"))
                    .isEqualTo("Lazarus ready on http://127.0.0.1:8400/v1 (JIT: C2) [API keys: on (2), admin: off]:"
                            + " no backends configured");
            summary.access("::1", 0, true);
            assertThat(summary.line("u", "ready")).contains("[API keys: off, admin: on]");
            assertThat(output.getOut()).doesNotContain("without API keys");
            summary.access("0.0.0.0", 0, true);
            assertThat(output.getOut()).contains("Lazarus listens on 0.0.0.0 without API keys");
        }
    }

    @Test
    void theJitSaysWhenC2IsMissing() {
        Map<String, String> optimizedLaunch = Map.of("UseCompiler", "true", "TieredCompilation", "true", "TieredStopAtLevel", "1");
        assertThat(StartupSummary.jit(optimizedLaunch::get)).startsWith("C1 only (-XX:TieredStopAtLevel=1)");
        Map<String, String> defaults = Map.of("UseCompiler", "true", "TieredCompilation", "true", "TieredStopAtLevel", "4");
        assertThat(StartupSummary.jit(defaults::get)).isEqualTo("C2");
        assertThat(StartupSummary.jit(Map.of("UseCompiler", "false")::get)).startsWith("interpreter only");
        assertThat(StartupSummary.jit(Map.<String, String>of()::get)).as("not HotSpot: no options to read").isEqualTo("C2");
    }

    @Test
    void thisTestJvmHasC2() {
        try (BackendRegistry none = BackendRegistry.create(List.of(), c -> null)) {
            assertThat(new StartupSummary(none, null, Duration.ZERO).line("x", "ready"))
                    .isEqualTo("Lazarus ready on x (JIT: C2): no backends configured");
        }
    }
}
