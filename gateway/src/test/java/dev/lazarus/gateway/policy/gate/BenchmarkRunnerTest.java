package dev.lazarus.gateway.policy.gate;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.BackendDescriptor;
import dev.lazarus.backend.api.BackendHealth;
import dev.lazarus.backend.api.InferenceBackend;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.Completion;
import dev.lazarus.backend.api.openai.CompletionRequest;
import dev.lazarus.gateway.routing.RouteTarget;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

class BenchmarkRunnerTest {

    private final AtomicReference<ChatCompletionRequest> sent = new AtomicReference<>();
    private final RouteTarget target = new RouteTarget(new Recording(), "m");
    private final BenchmarkRunner runner = new BenchmarkRunner(8, Duration.ofSeconds(5));

    @Test
    void benchmarkCallsAreGreedySoThatADefaultSampledEndOfTextCannotFailARun() {
        runner.run(target, "p", 1, Map.of("cache_prompt", false));

        assertThat(sent.get().temperature()).isEqualTo(0.0);
        assertThat(sent.get().extra()).containsEntry("cache_prompt", false).doesNotContainKey("temperature");
        assertThat(sent.get().maxTokens()).isEqualTo(8);
    }

    @Test
    void aJobsOwnTemperatureIsSentAsTheRequestsTemperature() {
        runner.run(target, "p", 1, Map.of("temperature", 0.7));

        assertThat(sent.get().temperature()).isEqualTo(0.7);
        assertThat(sent.get().extra()).doesNotContainKey("temperature");
    }

    private final class Recording implements InferenceBackend {
        @Override
        public String id() {
            return "recording";
        }

        @Override
        public BackendDescriptor describe() {
            throw new UnsupportedOperationException();
        }

        @Override
        public Mono<BackendHealth> health() {
            return Mono.empty();
        }

        @Override
        public Flux<ChatCompletionChunk> chat(ChatCompletionRequest request) {
            sent.set(request);
            return Flux.empty();
        }

        @Override
        public Flux<Completion> completion(CompletionRequest request) {
            return Flux.empty();
        }

        @Override
        public void close() {
        }
    }
}
