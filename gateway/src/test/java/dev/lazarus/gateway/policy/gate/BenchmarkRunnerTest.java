package dev.lazarus.gateway.policy.gate;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.gateway.routing.RouteTarget;
import dev.lazarus.gateway.testing.ScriptedBackend;
import dev.lazarus.gateway.testing.ScriptedBackendFactory;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BenchmarkRunnerTest {

    private final ScriptedBackend backend = (ScriptedBackend) new ScriptedBackendFactory()
            .create(new BackendConfig("recording", "scripted", Map.of()));
    private final RouteTarget target = new RouteTarget(backend, "m");
    private final BenchmarkRunner runner = new BenchmarkRunner(8, Duration.ofSeconds(5));

    @Test
    void benchmarkCallsAreGreedySoThatADefaultSampledEndOfTextCannotFailARun() {
        runner.run(target, "p", 1, Map.of("cache_prompt", false));

        assertThat(backend.lastChat().temperature()).isEqualTo(0.0);
        assertThat(backend.lastChat().extra()).containsEntry("cache_prompt", false).doesNotContainKey("temperature");
        assertThat(backend.lastChat().maxTokens()).isEqualTo(8);
    }

    @Test
    void aJobsOwnTemperatureIsSentAsTheRequestsTemperature() {
        runner.run(target, "p", 1, Map.of("temperature", 0.7));

        assertThat(backend.lastChat().temperature()).isEqualTo(0.7);
        assertThat(backend.lastChat().extra()).doesNotContainKey("temperature");
    }
}
