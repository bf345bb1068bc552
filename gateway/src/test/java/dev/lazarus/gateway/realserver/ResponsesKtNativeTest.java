package dev.lazarus.gateway.realserver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.gateway.resilience.HealthMonitor;
import dev.lazarus.gateway.routing.BackendRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The Responses API through the gateway in front of kt-native with the embedded {@code lazarus-tiny-moe}: the
 * openai-python suite that {@code ResponsesRealClientsTest} runs in front of llama-server (its function tool round
 * trip sends tools beside a {@code text.format} JSON schema), the npm suite (the openai SDK and an {@code @openai/agents}
 * one-tool agent run) and
 * a {@code codex exec} turn. A second kt-native backend serves a generated model with a Hermes-format (ChatML) template
 * as {@code tiny-calling}: there a named {@code tool_choice} makes the model write the call, so both SDK suites also run a
 * tool round trip whose call the model produced. Codex's prompt (some 15k tokens) needs
 * a context beyond the model's trained 2,048 ({@code context-size}), and sets no {@code max_output_tokens}: the
 * gateway caps generation ({@code lazarus.responses.max-output-tokens}).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ResponsesKtNativeTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final String KEY = "kt-key";
    /** The generated model (ChatML, Hermes calls) on which a named tool_choice is forced. */
    static final String CALLING = "tiny-calling";

    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) {
        registry.add("lazarus.backends[0].id", () -> "embedded");
        registry.add("lazarus.backends[0].kind", () -> "kt-native");
        registry.add("lazarus.backends[0].settings.model", () -> "classpath:models/lazarus-tiny-moe.gguf");
        registry.add("lazarus.backends[0].settings.context-size", () -> "32768");
        registry.add("lazarus.models[0].name", () -> "lazarus-tiny-moe");
        registry.add("lazarus.models[0].backends[0]", () -> "embedded");
        registry.add("lazarus.backends[1].id", () -> "calling");
        registry.add("lazarus.backends[1].kind", () -> "kt-native");
        registry.add("lazarus.backends[1].settings.model", () -> RealLlamaServers.model().toString());
        registry.add("lazarus.backends[1].settings.context-size", () -> "4096");
        registry.add("lazarus.backends[1].settings.model-name", () -> CALLING);
        registry.add("lazarus.models[1].name", () -> CALLING);
        registry.add("lazarus.models[1].backends[0]", () -> "calling");
        registry.add("lazarus.security.api-keys[0]", () -> KEY);
        registry.add("lazarus.responses.max-output-tokens", () -> "48");
        // A 15k-token prompt's first token on a shared two-core machine.
        registry.add("lazarus.resilience.attempt.first-token-timeout", () -> "5m");
        registry.add("lazarus.resilience.breaker.slow-time-to-first-token", () -> "10m");
    }

    @LocalServerPort
    int port;

    @Autowired
    BackendRegistry backends;

    @Autowired
    HealthMonitor monitor;

    @BeforeEach
    void modelLoaded() throws InterruptedException {
        BackendsUp.await(backends, monitor, Duration.ofMinutes(2), List.of("embedded", "calling"));
    }

    private String baseUrl() {
        return "http://127.0.0.1:" + port + "/v1";
    }

    @Test
    void aStreamedAnswerEndsCompleteAtTheGatewaysCap() throws Exception {
        String body = """
                {"model": "lazarus-tiny-moe", "input": "Tell me about the weather.", "stream": true, "store": false}""";
        String stream;
        try (HttpClient http = HttpClient.newHttpClient()) {
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(baseUrl() + "/responses"))
                    .timeout(Duration.ofMinutes(2)).header("Content-Type", "application/json")
                    .header("Authorization", "Bearer " + KEY).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
            stream = response.body();
        }
        List<JsonNode> events = new ArrayList<>();
        for (String line : stream.split("\n")) {
            if (line.startsWith("data: ")) {
                events.add(JSON.readTree(line.substring("data: ".length())));
            }
        }
        assertThat(events.getFirst().get("type").asString()).isEqualTo("response.created");
        JsonNode done = events.getLast();
        assertThat(done.get("type").asString()).isEqualTo("response.completed");
        assertThat(done.at("/response/output/0/type").asString()).isEqualTo("message");
        assertThat(done.at("/response/output/0/content/0/text").asString()).isNotEmpty();
        assertThat(done.at("/response/usage/output_tokens").asInt()).isBetween(1, 48);
    }

    @Test
    void openAiPythonSdk() throws Exception {
        Path repo = RealClients.repoRoot();
        Path site = RealClients.pythonSdk();
        String log = RealClients.runToSuccess(List.of("python3",
                repo.resolve("scripts/python-sdk/openai_responses_suite.py").toString(), baseUrl(), KEY, "lazarus-tiny-moe",
                CALLING),
                Map.of("PYTHONPATH", site.toString(), "PYTHONDONTWRITEBYTECODE", "1"), repo, Duration.ofMinutes(5));
        assertThat(log).as(log).contains("PASS a_model_produced_function_call_round_trip", "7 passed, 0 failed");
    }

    @Test
    void openAiNpmSdkAndAgentsSdk() throws Exception {
        Path repo = RealClients.repoRoot();
        String log = RealClients.runToSuccess(List.of("node",
                repo.resolve("scripts/node-clients/responses_suite.cjs").toString(), baseUrl(), KEY, "lazarus-tiny-moe",
                CALLING),
                Map.of("LAZARUS_NODE_CLIENTS", RealClients.nodeClients().toString()), repo, Duration.ofMinutes(5));
        assertThat(log).as(log).contains("PASS an Agents SDK agent forced to its tool calls it, runs it and answers",
                "5 passed, 0 failed");
    }

    @Test
    void codexExecCompletesATurn() throws Exception {
        RealClients.codexTurn(baseUrl(), "lazarus-tiny-moe", KEY, Duration.ofMinutes(8));
    }
}
