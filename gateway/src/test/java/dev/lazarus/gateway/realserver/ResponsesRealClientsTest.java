package dev.lazarus.gateway.realserver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.synthetic.SyntheticModels;
import dev.lazarus.kt.testsupport.LlamaCpp;
import dev.lazarus.kt.testsupport.LlamaServerProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The Responses API through the gateway in front of a real llama-server, driven by the clients users run:
 * openai-python ({@code scripts/python-sdk/openai_responses_suite.py}), the {@code openai} npm SDK and
 * {@code @openai/agents} ({@code scripts/node-clients/responses_suite.cjs}), and {@code codex exec} with a custom
 * provider of {@code wire_api = "responses"} completing one turn. Codex sends a prompt of some 15k tokens: the
 * generated model is written with a 32k training context (llama-server caps a slot at it), and llama-server caps
 * generation ({@code -n}). Plus parity with llama-server's own {@code /v1/responses}. The clients come from
 * {@code scripts/node-clients/setup.sh} and {@code scripts/python-sdk/setup.sh} (run by {@code .ci/run}); in CI
 * their absence fails the test, elsewhere it is skipped with the reason.
 */
@Tag("llama-server")
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ResponsesRealClientsTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final String KEY = "responses-key";
    /** Fits Codex's prompt with room to answer. */
    private static final int CONTEXT = 32768;

    static LlamaServerProcess server;

    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) {
        LlamaCpp.require();
        server = LlamaServerProcess.start(longContextModel(), "-c", Integer.toString(CONTEXT), "-n", "48",
                "--parallel", "1", "--jinja", "--no-webui");
        RealLlamaServers.backend(registry, 0, "llama", server.url().toString());
        registry.add("lazarus.backends[0].settings.responses", () -> "translate"); // the translation is under test
        // A 15k-token prompt's first token on a shared two-core machine.
        registry.add("lazarus.backends[0].settings.first-token-timeout", () -> "3m");
        registry.add("lazarus.resilience.attempt.first-token-timeout", () -> "3m");
        RealLlamaServers.route(registry, 0, "tiny", "llama");
        registry.add("lazarus.security.api-keys[0]", () -> KEY);
        registry.add("lazarus.resilience.breaker.slow-time-to-first-token", () -> "5m");
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @LocalServerPort
    int port;

    private String baseUrl() {
        return "http://127.0.0.1:" + port + "/v1";
    }

    @Test
    void openAiPythonSdk() throws Exception {
        Path repo = RealClients.repoRoot();
        Path site = RealClients.pythonSdk();
        String log = RealClients.runToSuccess(List.of("python3",
                repo.resolve("scripts/python-sdk/openai_responses_suite.py").toString(), baseUrl(), KEY, "tiny"),
                Map.of("PYTHONPATH", site.toString(), "PYTHONDONTWRITEBYTECODE", "1"), repo, Duration.ofMinutes(5));
        assertThat(log).as(log).contains("6 passed, 0 failed");
    }

    @Test
    void openAiNpmSdkAndAgentsSdk() throws Exception {
        Path repo = RealClients.repoRoot();
        Path clients = RealClients.nodeClients();
        String log = RealClients.runToSuccess(List.of("node",
                repo.resolve("scripts/node-clients/responses_suite.cjs").toString(), baseUrl(), KEY, "tiny"),
                Map.of("LAZARUS_NODE_CLIENTS", clients.toString()), repo, Duration.ofMinutes(5));
        assertThat(log).as(log).contains("4 passed, 0 failed");
    }

    @Test
    void codexExecCompletesATurn() throws Exception {
        RealClients.codexTurn(baseUrl(), "tiny", KEY, Duration.ofMinutes(6));
    }

    /**
     * The same request to llama-server's own endpoint and through the gateway: the same events and answer. (Without
     * {@code text.format}, which llama-server's endpoint ignores, and ended by the server's cap: llama-server
     * reports an answer cut by the client's {@code max_output_tokens} as completed, the gateway as OpenAI does.)
     */
    @Test
    void theGatewayAnswersAsLlamaServersOwnResponsesEndpoint() throws Exception {
        String request = """
                {"model": "tiny", "input": "Name a river.", "temperature": 0 %s}""";
        JsonNode theirs = JSON.readTree(post(server.url().resolve("/v1/responses"), request.formatted("")));
        JsonNode ours = JSON.readTree(post(URI.create(baseUrl() + "/responses"), request.formatted("")));
        assertThat(ours.get("status").asString()).isEqualTo(theirs.get("status").asString()).isEqualTo("completed");
        assertThat(ours.get("output").size()).isEqualTo(theirs.get("output").size());
        assertThat(ours.at("/output/0/type").asString()).isEqualTo(theirs.at("/output/0/type").asString());
        assertThat(ours.at("/output/0/role").asString()).isEqualTo(theirs.at("/output/0/role").asString());
        assertThat(ours.at("/output/0/content/0/type").asString()).isEqualTo(theirs.at("/output/0/content/0/type").asString());
        assertThat(ours.at("/output/0/content/0/text").asString()).isEqualTo(theirs.at("/output/0/content/0/text").asString());
        assertThat(ours.at("/usage/input_tokens").asInt()).isEqualTo(theirs.at("/usage/input_tokens").asInt());
        assertThat(ours.at("/usage/output_tokens").asInt()).isEqualTo(theirs.at("/usage/output_tokens").asInt());

        List<String> theirEvents = eventTypes(post(server.url().resolve("/v1/responses"),
                request.formatted(", \"stream\": true")));
        List<String> ourEvents = eventTypes(post(URI.create(baseUrl() + "/responses"), request.formatted(", \"stream\": true")));
        assertThat(ourEvents).isEqualTo(theirEvents).startsWith("response.created").endsWith("response.completed");
    }

    private static List<String> eventTypes(String stream) {
        List<String> types = new ArrayList<>();
        for (String line : stream.split("\n")) {
            if (line.startsWith("event: ")) {
                types.add(line.substring("event: ".length()));
            }
        }
        return types;
    }

    private static String post(URI uri, String body) throws Exception {
        try (HttpClient http = HttpClient.newHttpClient()) {
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofMinutes(2))
                    .header("Content-Type", "application/json").header("Authorization", "Bearer " + KEY)
                    .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
            return response.body();
        }
    }

    /** The tiny llama with a training context that holds Codex's prompt. */
    private static Path longContextModel() {
        SyntheticModels.Spec t = SyntheticModels.tinyLlama();
        try {
            return SyntheticModels.write(new SyntheticModels.Spec("tiny-llama-32k", t.arch(), t.weightType(), t.seed(),
                    t.layers(), t.dim(), t.heads(), t.kvHeads(), t.headDim(), t.ffn(), t.moe(), t.mla(), t.ropeTheta(),
                    t.yarn(), CONTEXT, t.rmsEps(), t.tiedEmbeddings()),
                    Files.createTempDirectory("lazarus-responses").resolve("tiny-llama-32k.gguf"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

}
