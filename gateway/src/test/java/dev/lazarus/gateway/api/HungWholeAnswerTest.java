package dev.lazarus.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Issue 35's Low item: a non-streamed request on a hung upstream (it accepts connections and answers nothing, its
 * health check included) is failed over, or ended, at the first-token limit (1 s here), not after the answer timeout
 * (60 s here); an upstream that is slower than that limit but answers its health check is waited for. Real local
 * servers on sockets, non-streamed calls passed through whole.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "lazarus.health.interval=1h", "lazarus.health.timeout=1s",
        "lazarus.resilience.attempt.first-token-timeout=1s", "lazarus.resilience.attempt.answer-timeout=60s"})
@ActiveProfiles("test")
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class HungWholeAnswerTest {

    /** Far under the answer timeout: the first-token limit, the health check's limit and a loaded host's slack. */
    private static final Duration WELL_BEFORE_THE_ANSWER_TIMEOUT = Duration.ofSeconds(30);

    private static WholeAnswerUpstream hungBeforeSpare;
    private static WholeAnswerUpstream spare;
    private static WholeAnswerUpstream hungAlone;
    private static WholeAnswerUpstream slow;

    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) throws IOException {
        hungBeforeSpare = new WholeAnswerUpstream("never", Duration.ZERO);
        spare = new WholeAnswerUpstream("from the spare", Duration.ZERO);
        hungAlone = new WholeAnswerUpstream("never", Duration.ZERO);
        slow = new WholeAnswerUpstream("slow but alive", Duration.ofSeconds(3));
        backend(registry, 0, "hung-first", hungBeforeSpare);
        backend(registry, 1, "spare", spare);
        backend(registry, 2, "hung-alone", hungAlone);
        backend(registry, 3, "slow", slow);
        model(registry, 0, "failover-model", "hung-first", "spare");
        model(registry, 1, "alone-model", "hung-alone");
        model(registry, 2, "slow-model", "slow");
    }

    private static void backend(DynamicPropertyRegistry registry, int i, String id, WholeAnswerUpstream upstream) {
        registry.add("lazarus.backends[" + i + "].id", () -> id);
        registry.add("lazarus.backends[" + i + "].kind", () -> "llamacpp");
        registry.add("lazarus.backends[" + i + "].settings.url", upstream::baseUrl);
        registry.add("lazarus.backends[" + i + "].settings.model-name", () -> id);
    }

    private static void model(DynamicPropertyRegistry registry, int i, String name, String... backends) {
        registry.add("lazarus.models[" + i + "].name", () -> name);
        for (int b = 0; b < backends.length; b++) {
            String id = backends[b];
            registry.add("lazarus.models[" + i + "].backends[" + b + "]", () -> id);
        }
    }

    @AfterAll
    static void stop() throws IOException {
        for (WholeAnswerUpstream upstream : new WholeAnswerUpstream[] {hungBeforeSpare, spare, hungAlone, slow}) {
            upstream.close();
        }
    }

    @LocalServerPort
    int port;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void aHungUpstreamIsFailedOverAtTheFirstTokenLimit() throws Exception {
        hungBeforeSpare.hang();
        long start = System.nanoTime();
        HttpResponse<String> response = chat("failover-model");
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).contains("from the spare");
        assertThat(took).isGreaterThanOrEqualTo(Duration.ofSeconds(1)).isLessThan(WELL_BEFORE_THE_ANSWER_TIMEOUT);
    }

    @Test
    void aHungUpstreamAloneEndsTheRequestAtTheFirstTokenLimit() throws Exception {
        hungAlone.hang();
        long start = System.nanoTime();
        HttpResponse<String> response = chat("alone-model");
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertThat(response.statusCode()).isBetween(500, 599);
        assertThat(response.body()).contains("\"error\"").contains("tried hung-alone (timeout)");
        assertThat(took).isGreaterThanOrEqualTo(Duration.ofSeconds(1)).isLessThan(WELL_BEFORE_THE_ANSWER_TIMEOUT);
    }

    @Test
    void anUpstreamSlowerThanTheFirstTokenLimitThatAnswersItsHealthCheckIsWaitedFor() throws Exception {
        long start = System.nanoTime();
        HttpResponse<String> response = chat("slow-model");
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).contains("slow but alive");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofSeconds(3));
    }

    private HttpResponse<String> chat(String model) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/chat/completions"))
                .timeout(Duration.ofSeconds(70))
                .header("Content-Type", "application/json")
                .header("Authorization", "Bearer test-key-1")
                .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"" + model
                        + "\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"))
                .build(), HttpResponse.BodyHandlers.ofString());
    }
}
