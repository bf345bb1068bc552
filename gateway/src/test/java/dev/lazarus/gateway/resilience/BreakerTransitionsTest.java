package dev.lazarus.gateway.resilience;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;

import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.client.ResponseDefinitionBuilder;
import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendFactories;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.gateway.routing.AttemptLoop;
import dev.lazarus.gateway.routing.BackendCallDecorator;
import dev.lazarus.gateway.routing.BackendRegistry;
import dev.lazarus.gateway.routing.MidStreamMode;
import dev.lazarus.gateway.routing.ModelRoute;
import dev.lazarus.gateway.routing.RoutePlanner;
import dev.lazarus.gateway.routing.RouteTable;
import dev.lazarus.gateway.routing.RouteTarget;
import dev.lazarus.gateway.routing.Router;
import dev.lazarus.gateway.routing.StreamResumer;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig.SlidingWindowType;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

/**
 * Breaker transitions against a llama-server played by WireMock (the real llamacpp backend
 * talks to it), with a scripted fallback behind it: bursts of 500s, stalls between tokens, tokens
 * slower than the floor, and recovery through half-open. Small windows keep it quick.
 */
class BreakerTransitionsTest {

    private static final ResilienceProperties.Breaker LIMITS = new ResilienceProperties.Breaker(
            50, 50, Duration.ofMillis(400), 10, 4, 4, SlidingWindowType.COUNT_BASED, 4, Duration.ofMillis(500), 2);

    private WireMockServer upstream;
    private BackendRegistry backends;
    private CircuitBreaker breaker;
    private Router router;

    @BeforeEach
    void start() {
        upstream = new WireMockServer(options().bindAddress("127.0.0.1").dynamicPort());
        upstream.start();
        BackendFactories factories = BackendFactories.load(getClass().getClassLoader());
        backends = BackendRegistry.create(List.of(
                new BackendConfig("wm", "llamacpp", Map.of("url", upstream.baseUrl(), "idle-timeout", "1s",
                        "first-token-timeout", "5s")),
                new BackendConfig("fallback", "scripted", Map.of())), factories::create);
        ResilienceProperties properties = new ResilienceProperties(LIMITS, Map.of(), MidStreamMode.ERROR,
                Duration.ofMinutes(1));
        BackendBreakers breakers = new BackendBreakers(CircuitBreakerRegistry.ofDefaults(), backends, properties);
        breaker = breakers.breaker("wm");
        BackendStatsRegistry stats = new BackendStatsRegistry(Duration.ofMinutes(1));
        HealthMonitor health = new HealthMonitor(backends, new HealthProperties(Duration.ofHours(1), Duration.ofSeconds(1)));
        BackendAvailability availability = new BackendAvailability(health, breakers, stats);
        RouteTable routes = new RouteTable(List.of(new ModelRoute("m", List.of(
                new RouteTarget(backends.find("wm").orElseThrow(), "m"),
                new RouteTarget(backends.find("fallback").orElseThrow(), "m")), "tests", Duration.ofSeconds(30))));
        router = new Router(routes, RoutePlanner.configuredOrder().filteredBy(List.of(new AvailabilityRouteFilter(availability))),
                new AttemptLoop(BackendCallDecorator.chain(List.of(new CircuitBreakerDecorator(breakers, stats))),
                        StreamResumer.none()));
    }

    @AfterEach
    void stop() {
        backends.close();
        upstream.stop();
    }

    private static ChatCompletionRequest request() {
        return ChatCompletionRequest.builder().model("m").messages(List.of(ChatMessage.user("hi"))).build();
    }

    /** Answers every call with its full text, or "ERROR: kind" when the stream failed. */
    private List<String> send(int calls) {
        return Flux.range(0, calls)
                .flatMap(i -> router.chat(request()).map(ChatCompletionChunk::contentDelta)
                        .reduce("", String::concat)
                        .onErrorResume(e -> reactor.core.publisher.Mono.just("ERROR: " + e.getMessage())), calls)
                .collectList().block(Duration.ofSeconds(30));
    }

    /** A llama-server event stream of {@code tokens} one-letter tokens. */
    private static String sse(int tokens) {
        StringBuilder b = new StringBuilder();
        b.append(event("{\"role\":\"assistant\",\"content\":null}", null));
        for (int i = 0; i < tokens; i++) {
            b.append(event("{\"content\":\"" + (char) ('a' + i % 26) + "\"}", null));
        }
        b.append(event("{}", "\"stop\""));
        b.append("data: {\"id\":\"u\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[],"
                + "\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":" + tokens + ",\"total_tokens\":" + (tokens + 3)
                + "}}\n\n");
        return b.append("data: [DONE]\n\n").toString();
    }

    private static String event(String delta, String finish) {
        return "data: {\"id\":\"u\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":"
                + "[{\"index\":0,\"delta\":" + delta + ",\"finish_reason\":" + finish + "}]}\n\n";
    }

    private void answer(ResponseDefinitionBuilder response) {
        upstream.stubFor(post(urlEqualTo("/v1/chat/completions")).willReturn(response));
    }

    private static ResponseDefinitionBuilder stream(int tokens) {
        return aResponse().withStatus(200).withHeader("Content-Type", "text/event-stream").withBody(sse(tokens));
    }

    private void awaitState(CircuitBreaker.State state) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (breaker.getState() != state && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(breaker.getState()).isEqualTo(state);
    }

    @Test
    void aBurstOf500sOpensTheBreakerThenTrafficSkipsTheBackendUntilItRecoversThroughHalfOpen() throws Exception {
        answer(aResponse().withStatus(500).withBody("{\"error\":{\"code\":500,\"message\":\"boom\",\"type\":\"server_error\"}}"));
        assertThat(send(4)).as("each call fails over to the fallback").containsOnly("Hello, world");
        assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
        assertThat(breaker.getMetrics().getNumberOfFailedCalls()).isEqualTo(4);

        assertThat(send(3)).containsOnly("Hello, world");
        upstream.verify(4, postRequestedFor(urlEqualTo("/v1/chat/completions")));

        answer(stream(6));
        awaitState(CircuitBreaker.State.HALF_OPEN);
        assertThat(send(1)).containsExactly("abcdef");
        assertThat(send(1)).containsExactly("abcdef");
        assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
    }

    @Test
    void aFailedProbeWhileHalfOpenOpensItAgain() throws Exception {
        answer(aResponse().withStatus(502));
        send(4);
        awaitState(CircuitBreaker.State.HALF_OPEN);
        send(2);
        assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
    }

    @Test
    void stallsBetweenTokensCountAsFailures() {
        // Half the stream, then a pause longer than the idle timeout.
        answer(stream(8).withChunkedDribbleDelay(2, 4000));
        assertThat(send(4)).allSatisfy(r -> assertThat(r).startsWith("ERROR").contains("stalled"));
        assertThat(breaker.getMetrics().getNumberOfFailedCalls()).isEqualTo(4);
        assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
    }

    @Test
    void tokensSlowerThanTheFloorCountAsSlowAndFastOnesDoNot() {
        answer(stream(8));
        assertThat(send(2)).containsOnly("abcdefgh");
        assertThat(breaker.getMetrics().getNumberOfSlowSuccessfulCalls()).isZero();

        // 8 tokens spread over 1.6 s: about 5 tok/s, under the floor of 10.
        answer(stream(8).withChunkedDribbleDelay(8, 1600));
        assertThat(send(2)).containsOnly("abcdefgh");
        assertThat(breaker.getMetrics().getNumberOfSlowSuccessfulCalls()).isEqualTo(2);
        assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
    }

    @Test
    void aSlowFirstTokenCountsAsSlow() {
        answer(stream(2).withFixedDelay(700));
        send(4);
        assertThat(breaker.getMetrics().getNumberOfSlowSuccessfulCalls()).isEqualTo(4);
        assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
    }

    @Test
    void requestsTheBackendCannotServeFailOverWithoutCounting() {
        answer(aResponse().withStatus(400).withBody(
                "{\"error\":{\"code\":400,\"message\":\"the request exceeds the available context size\","
                        + "\"type\":\"exceed_context_size_error\"}}"));
        assertThat(send(6)).containsOnly("Hello, world");
        assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
        assertThat(breaker.getMetrics().getNumberOfFailedCalls()).isZero();
    }
}
