package dev.lazarus.gateway.api;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;

import com.github.tomakehurst.wiremock.WireMockServer;
import dev.lazarus.gateway.resilience.BackendBreakers;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.MediaType;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * A streamed chat answer from a route's only candidate, a llamacpp-kind backend, is relayed as its
 * server's events (issue 13): the client gets the server's bytes with the gateway's identity written
 * over, and the meters, the breaker's judgement, the error contract and the end of an answer cut at its
 * token limit stay what they were; a route with two candidates still fails over.
 */
@SpringBootTest(properties = {"lazarus.security.api-keys[0]=relay-key", "lazarus.health.interval=1h",
        "lazarus.resilience.attempt.retries=0"})
@ActiveProfiles("test")
@AutoConfigureWebTestClient
class EventRelayTest {

    private static WireMockServer solo;
    private static WireMockServer first;
    private static WireMockServer second;

    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) {
        solo = new WireMockServer(options().bindAddress("127.0.0.1").dynamicPort());
        first = new WireMockServer(options().bindAddress("127.0.0.1").dynamicPort());
        second = new WireMockServer(options().bindAddress("127.0.0.1").dynamicPort());
        String[] ids = {"solo", "first", "second"};
        WireMockServer[] servers = {solo, first, second};
        for (int i = 0; i < servers.length; i++) {
            WireMockServer server = servers[i];
            server.start();
            server.stubFor(get(urlEqualTo("/health")).willReturn(okJson("{\"status\":\"ok\"}")));
            String id = ids[i];
            registry.add("lazarus.backends[" + i + "].id", () -> id);
            registry.add("lazarus.backends[" + i + "].kind", () -> "llamacpp");
            registry.add("lazarus.backends[" + i + "].settings.url", server::baseUrl);
            registry.add("lazarus.backends[" + i + "].settings.model-name", () -> "tiny");
        }
        registry.add("lazarus.models[0].name", () -> "solo-model");
        registry.add("lazarus.models[0].backends[0]", () -> "solo");
        registry.add("lazarus.models[1].name", () -> "pair-model");
        registry.add("lazarus.models[1].backends[0]", () -> "first");
        registry.add("lazarus.models[1].backends[1]", () -> "second");
    }

    @AfterAll
    static void stop() {
        solo.stop();
        first.stop();
        second.stop();
    }

    @Autowired
    WebTestClient client;

    @Autowired
    MeterRegistry meters;

    @Autowired
    BackendBreakers breakers;

    @BeforeEach
    void reset() {
        for (WireMockServer server : new WireMockServer[] {solo, first, second}) {
            server.resetRequests();
        }
    }

    // A server that writes created as a float (Python's time.time()) and numbers of its own form.
    private static final List<String> EVENTS = List.of(
            "{\"id\":\"chatcmpl-7\",\"object\":\"chat.completion.chunk\",\"created\":1700000000.5,\"model\":\"tiny\","
                    + "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}",
            "{\"id\":\"chatcmpl-7\",\"object\":\"chat.completion.chunk\",\"created\":1700000000.5,\"model\":\"tiny\","
                    + "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"},\"finish_reason\":null}],"
                    + "\"x_vendor\":{\"score\":1.50, \"tags\":[ ]}}",
            "{\"id\":\"chatcmpl-7\",\"object\":\"chat.completion.chunk\",\"created\":1700000000.5,\"model\":\"tiny\","
                    + "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo \\\"\\u00e9\\\"\"},\"finish_reason\":null}]}",
            "{\"id\":\"chatcmpl-7\",\"object\":\"chat.completion.chunk\",\"created\":1700000000.5,\"model\":\"tiny\","
                    + "\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}",
            "{\"id\":\"chatcmpl-7\",\"object\":\"chat.completion.chunk\",\"created\":1700000000.5,\"model\":\"tiny\","
                    + "\"choices\":[],\"usage\":{\"prompt_tokens\":11,\"completion_tokens\":7,\"total_tokens\":18}}");

    private static String stream(List<String> events, boolean done) {
        StringBuilder body = new StringBuilder();
        events.forEach(e -> body.append("data: ").append(e).append("\n\n"));
        return done ? body.append("data: [DONE]\n\n").toString() : body.toString();
    }

    private static void answer(WireMockServer server, String body) {
        server.stubFor(post(urlEqualTo("/v1/chat/completions")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "text/event-stream").withBody(body)));
    }

    private WebTestClient.ResponseSpec chat(String model, String extra) {
        return client.mutate().responseTimeout(Duration.ofSeconds(30)).build().post().uri("/v1/chat/completions")
                .header("Authorization", "Bearer relay-key").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"model\":\"" + model + "\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]"
                        + extra + "}")
                .exchange();
    }

    private static List<String> events(String body) {
        return Arrays.stream(body.split("\n\n")).filter(e -> !e.isBlank()).map(e -> e.substring("data:".length()).strip())
                .toList();
    }

    private static String value(String event, String field) {
        Matcher m = Pattern.compile("\"" + field + "\":(\"[^\"]*\"|[0-9]+)").matcher(event);
        assertThat(m.find()).as("%s in %s", field, event).isTrue();
        return m.group(1);
    }

    @Test
    void theClientGetsTheServersBytesWithTheGatewaysIdentityAndTheUsageItAskedFor() {
        answer(solo, stream(EVENTS, true));

        String body = chat("solo-model", ",\"stream_options\":{\"include_usage\":true}").expectStatus().isOk()
                .expectBody(String.class).returnResult().getResponseBody();

        List<String> got = events(body);
        assertThat(got).hasSize(EVENTS.size() + 1);
        assertThat(got.getLast()).isEqualTo("[DONE]");
        String id = value(got.getFirst(), "id");
        String created = value(got.getFirst(), "created");
        String model = value(got.getFirst(), "model");
        assertThat(id).startsWith("\"chatcmpl-").isNotEqualTo("\"chatcmpl-7\"");
        for (int i = 0; i < EVENTS.size(); i++) {
            assertThat(got.get(i)).isEqualTo(EVENTS.get(i).replace("\"chatcmpl-7\"", id)
                    .replace("1700000000.5", created).replace("\"model\":\"tiny\"", "\"model\":" + model));
        }

        String withoutUsage = chat("solo-model", "").expectStatus().isOk().expectBody(String.class).returnResult()
                .getResponseBody();
        assertThat(events(withoutUsage)).hasSize(EVENTS.size()).noneMatch(e -> e.contains("\"usage\""));
    }

    @Test
    void anEventTheGatewayDoesNotChangeIsTheServersBytesButForIdAndModel() {
        // created as OpenAI writes it, whole seconds: the response keeps the server's
        List<String> events = EVENTS.stream().map(e -> e.replace("1700000000.5", "1700000000")).toList();
        answer(solo, stream(events, true));

        String body = chat("solo-model", ",\"stream_options\":{\"include_usage\":true}").expectStatus().isOk()
                .expectBody(String.class).returnResult().getResponseBody();

        List<String> got = events(body);
        assertThat(got).hasSize(events.size() + 1);
        String id = value(got.getFirst(), "id");
        String model = value(got.getFirst(), "model");
        for (int i = 0; i < events.size(); i++) {
            assertThat(got.get(i)).isEqualTo(events.get(i).replace("\"chatcmpl-7\"", id)
                    .replace("\"model\":\"tiny\"", "\"model\":" + model));
        }
    }

    @Test
    void theAnswerIsMeteredOnceWithTheServersUsage() {
        answer(solo, stream(EVENTS, true));
        double tokens = count("lazarus.completion.tokens");
        double prompt = count("lazarus.prompt.tokens");
        long ttft = ttftCount();
        double calls = calls("success");

        chat("solo-model", "").expectStatus().isOk().expectBody(String.class).returnResult();

        awaitMetered(() -> calls("success") - calls >= 1 && count("lazarus.completion.tokens") - tokens >= 7
                && count("lazarus.prompt.tokens") - prompt >= 11 && ttftCount() - ttft >= 1);
        assertThat(count("lazarus.completion.tokens") - tokens).isEqualTo(7);
        assertThat(count("lazarus.prompt.tokens") - prompt).isEqualTo(11);
        assertThat(ttftCount() - ttft).isEqualTo(1);
        assertThat(calls("success") - calls).isEqualTo(1);
    }

    @Test
    void aFailureBeforeTheFirstByteIsAnOpenAiErrorAndCountsForTheBreaker() {
        solo.stubFor(post(urlEqualTo("/v1/chat/completions")).willReturn(aResponse().withStatus(500)
                .withHeader("Content-Type", "application/json").withBody("{\"error\":{\"message\":\"boom\"}}")));
        double failed = calls("upstream");
        int breakerFailures = breakers.breaker("solo").getMetrics().getNumberOfFailedCalls();

        String body = chat("solo-model", "").expectStatus().is5xxServerError().expectBody(String.class).returnResult()
                .getResponseBody();

        assertThat(body).contains("\"error\"").contains("\"message\"").contains("\"type\"");
        awaitMetered(() -> calls("upstream") - failed >= 1
                && breakers.breaker("solo").getMetrics().getNumberOfFailedCalls() - breakerFailures >= 1);
        assertThat(calls("upstream") - failed).isEqualTo(1);
        assertThat(breakers.breaker("solo").getMetrics().getNumberOfFailedCalls() - breakerFailures).isEqualTo(1);
    }

    @Test
    void aStreamCutAfterItsFirstTokenEndsWithAnErrorEventAndDone() {
        answer(solo, stream(EVENTS.subList(0, 2), false));

        String body = chat("solo-model", "").expectStatus().isOk().expectBody(String.class).returnResult()
                .getResponseBody();

        List<String> got = events(body);
        assertThat(got.get(1)).contains("\"Hel\"");
        assertThat(got.get(got.size() - 2)).startsWith("{\"error\":");
        assertThat(got.getLast()).isEqualTo("[DONE]");
    }

    @Test
    void aStreamCutAtItsTokenLimitGetsItsEnd() {
        answer(solo, stream(EVENTS.subList(0, 3), false));

        String body = chat("solo-model", ",\"max_tokens\":2,\"stream_options\":{\"include_usage\":true}")
                .expectStatus().isOk().expectBody(String.class).returnResult().getResponseBody();

        List<String> got = events(body);
        assertThat(got).noneMatch(e -> e.contains("\"error\""));
        assertThat(got.get(3)).contains("\"finish_reason\":\"length\"");
        assertThat(got.get(4)).contains("\"completion_tokens\":2");
        assertThat(got.getLast()).isEqualTo("[DONE]");
    }

    @Test
    void aRouteWithTwoCandidatesFailsOverBeforeTheFirstByte() {
        first.stubFor(post(urlEqualTo("/v1/chat/completions")).willReturn(aResponse().withStatus(503)
                .withHeader("Content-Type", "application/json").withBody("{\"error\":{\"message\":\"loading\"}}")));
        answer(second, stream(EVENTS, true));

        String body = chat("pair-model", "").expectStatus().isOk()
                .expectHeader().valueEquals(OpenAiController.SERVED_BY_HEADER, "second")
                .expectBody(String.class).returnResult().getResponseBody();

        assertThat(events(body)).anyMatch(e -> e.contains("\"Hel\"")).last().isEqualTo("[DONE]");
    }

    private double count(String name) {
        Counter counter = meters.find(name).tag("backend", "solo").counter();
        return counter == null ? 0 : counter.count();
    }

    private long ttftCount() {
        Timer timer = meters.find("lazarus.backend.ttft").tag("backend", "solo").timer();
        return timer == null ? 0 : timer.count();
    }

    private double calls(String outcome) {
        Counter counter = meters.find("lazarus.backend.calls").tag("backend", "solo").tag("outcome", outcome).counter();
        return counter == null ? 0 : counter.count();
    }

    /**
     * The call is metered (and counted by its breaker) as it ends, which may be just after the client has its last
     * byte: waits up to 5 s for {@code metered}, then lets the assertions say what is missing.
     */
    private static void awaitMetered(BooleanSupplier metered) {
        long until = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (!metered.getAsBoolean() && System.nanoTime() < until) {
            Thread.onSpinWait();
        }
    }
}
