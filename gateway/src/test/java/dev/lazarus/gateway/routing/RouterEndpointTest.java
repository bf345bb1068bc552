package dev.lazarus.gateway.routing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.gateway.metrics.MeteringDecorator;
import dev.lazarus.gateway.testing.ScriptedBackendFactory;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/** The router serves the client-facing endpoint its caller names, and decides an answer's form itself. */
class RouterEndpointTest {

    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final Router router = new Router(
            new RouteTable(List.of(new ModelRoute("m", List.of(new RouteTarget(
                    new ScriptedBackendFactory().create(new BackendConfig("ep-one", "scripted", Map.of())), "m")),
                    "test", Duration.ofSeconds(10)))),
            RoutePlanner.configuredOrder(),
            new AttemptLoop(BackendCallDecorator.chain(List.of(new MeteringDecorator(meters))), StreamResumer.none()));

    private static ChatCompletionRequest request(boolean stream) {
        return ChatCompletionRequest.builder().model("m").messages(List.of(ChatMessage.user("hi"))).stream(stream)
                .build();
    }

    @Test
    void aChatCallServingAnotherEndpointIsMeteredAsThatEndpoint() {
        StepVerifier.create(router.chat(request(true), ApiEndpoint.RESPONSES).count())
                .assertNext(n -> assertThat(n).isPositive())
                .verifyComplete();
        StepVerifier.create(router.chat(request(false)).count())
                .assertNext(n -> assertThat(n).isPositive())
                .verifyComplete();
        assertThat(meters.get("lazarus.backend.calls").tags("endpoint", "responses", "outcome", "success").counter()
                .count()).isEqualTo(1);
        assertThat(meters.get("lazarus.backend.calls").tags("endpoint", "chat", "outcome", "success").counter()
                .count()).isEqualTo(1);
    }

    @Test
    void theRouterDecidesTheAnswersForm() {
        // The scripted backend streams only: a non-streaming request is put together from its chunks.
        assertThat(router.chatAnswer(request(true))).isInstanceOf(Answer.Streamed.class);
        assertThat(router.chatAnswer(request(false))).isInstanceOf(Answer.Aggregated.class);
    }

    @Test
    void everyEndpointHasATagAndACanonicalPath() {
        for (ApiEndpoint endpoint : ApiEndpoint.values()) {
            assertThat(endpoint.tag()).matches("[a-z_]+");
            assertThat(endpoint.paths()).isNotEmpty().allMatch(path -> path.startsWith("/"));
        }
        assertThat(ApiEndpoint.RERANK.paths()).containsExactly("/v1/rerank", "/rerank");
    }
}
