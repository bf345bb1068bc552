package dev.lazarus.gateway.realserver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.testsupport.LlamaServerProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * Embeddings, rerank, tokenize and detokenize through the gateway in front of real llama-servers (one started with
 * {@code --embeddings}, one with {@code --reranking}, one with neither) and kt-native on the same generated GGUF:
 * each answer is the serving llama-server's own but for its {@code model}; a server that does not serve the endpoint
 * (its 501) or does not answer at all hands the request to the next backend before anything reached the client;
 * kt-native tokenizes as llama-server does and is skipped for embeddings, a model with no backend for an endpoint
 * is a 400 naming both; the API key guards the endpoints outside {@code /v1} too.
 */
@Tag("llama-server")
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class JsonEndpointsRealServerTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final String KEY = "sk-json-endpoints-test";
    private static final List<String> TEXTS = List.of("hello world", "The quick brown fox jumps over the lazy dog.",
            "  leading spaces, tabs\tand\nnewlines", "ünïcödé — 漢字 and emoji 🙂", "<s> not a control token?", "");

    static LlamaServerProcess embedder;
    static LlamaServerProcess reranker;
    static LlamaServerProcess plain;

    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) {
        embedder = RealLlamaServers.startParallel(1, 512, "--embeddings", "--pooling", "mean");
        reranker = RealLlamaServers.startParallel(1, 512, "--reranking", "--pooling", "rank");
        plain = RealLlamaServers.start();
        RealLlamaServers.backend(registry, 0, "plain", plain.url().toString());
        RealLlamaServers.backend(registry, 1, "embedder", embedder.url().toString());
        RealLlamaServers.backend(registry, 2, "dead", "http://127.0.0.1:" + RealLlamaServers.closedPort());
        RealLlamaServers.backend(registry, 3, "reranker", reranker.url().toString());
        registry.add("lazarus.backends[4].id", () -> "kt");
        registry.add("lazarus.backends[4].kind", () -> "kt-native");
        registry.add("lazarus.backends[4].settings.model", () -> RealLlamaServers.model().toString());
        registry.add("lazarus.backends[4].settings.model-name", () -> "kt");
        registry.add("lazarus.backends[4].settings.threads", () -> "1");
        registry.add("lazarus.backends[4].settings.context-size", () -> "512");
        // The plain server first: it answers /v1/embeddings with a 501, the embedder serves.
        RealLlamaServers.route(registry, 0, "embed", "plain", "embedder");
        RealLlamaServers.route(registry, 1, "rank", "dead", "reranker");
        RealLlamaServers.route(registry, 2, "tiny", "plain");
        RealLlamaServers.route(registry, 3, "kt", "kt");
        registry.add("lazarus.security.api-keys[0]", () -> KEY);
    }

    @AfterAll
    static void stopServers() {
        RealLlamaServers.stopAll();
    }

    @LocalServerPort
    int port;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void embeddingsAreTheEmbeddersOwnAfterTheServerWithoutThemDeclined() throws Exception {
        for (String format : List.of("float", "base64")) {
            ObjectNode request = JSON.createObjectNode().put("model", "embed").put("encoding_format", format);
            request.putArray("input").add("hello world").add("the sea");
            HttpResponse<String> through = post("/v1/embeddings", request, KEY);
            assertThat(through.statusCode()).as(through.body()).isEqualTo(200);
            assertThat(through.headers().firstValue("X-Lazarus-Backend")).contains("embedder");
            JsonNode ours = JSON.readTree(through.body());
            JsonNode theirs = JSON.readTree(direct(embedder, "/v1/embeddings", request).body());
            // The model that answered, as chat's answers name it (lazarus.routing.response-model: served).
            assertThat(ours.get("model").asString()).isEqualTo(servedModel());
            assertThat(ours.get("data")).hasSize(2).isEqualTo(theirs.get("data"));
            assertThat(ours.get("usage")).isEqualTo(theirs.get("usage"));
            assertThat(ours.get("object").asString()).isEqualTo("list");
            JsonNode first = ours.get("data").get(0).get("embedding");
            assertThat(format.equals("float") ? first.isArray() && !first.isEmpty() : first.isString()).isTrue();
        }
        assertThat(prometheus()).containsPattern(
                "lazarus_backend_calls_total\\{[^}]*backend=\"embedder\",endpoint=\"embeddings\"[^}]*outcome=\"success\"");
    }

    @Test
    void rerankOnBothPathsIsTheRerankersOwnPastADeadBackend() throws Exception {
        ObjectNode request = JSON.createObjectNode().put("model", "rank").put("query", "What is the sea?");
        request.putArray("documents").add("The sea is a body of salt water.").add("A fox jumps.").add("hello");
        JsonNode theirs = JSON.readTree(direct(reranker, "/v1/rerank", request).body());
        assertThat(theirs.get("results")).hasSize(3);
        for (String path : List.of("/v1/rerank", "/rerank")) {
            HttpResponse<String> through = post(path, request, KEY);
            assertThat(through.statusCode()).as(through.body()).isEqualTo(200);
            assertThat(through.headers().firstValue("X-Lazarus-Backend")).contains("reranker");
            JsonNode ours = JSON.readTree(through.body());
            assertThat(ours.get("results")).isEqualTo(theirs.get("results"));
            assertThat(ours.get("model").asString()).isEqualTo(servedModel());
        }
    }

    @Test
    void tokenizeAndDetokenizeAreLlamaServersOwn() throws Exception {
        for (String text : TEXTS) {
            for (ObjectNode request : tokenizeRequests("tiny", text)) {
                assertThat(JSON.readTree(post("/tokenize", request, KEY).body()))
                        .as(request.toString()).isEqualTo(JSON.readTree(direct(plain, "/tokenize", request).body()));
            }
            ObjectNode detokenize = JSON.createObjectNode().put("model", "tiny");
            detokenize.set("tokens", JSON.readTree(direct(plain, "/tokenize",
                    JSON.createObjectNode().put("content", text)).body()).get("tokens"));
            assertThat(JSON.readTree(post("/detokenize", detokenize, KEY).body())).as(text)
                    .isEqualTo(JSON.readTree(direct(plain, "/detokenize", detokenize).body()));
        }
    }

    @Test
    void ktNativeTokenizesAndDetokenizesAsLlamaServerDoesOnTheSameModel() throws Exception {
        awaitLoaded("kt");
        for (String text : TEXTS) {
            for (ObjectNode request : tokenizeRequests("kt", text)) {
                HttpResponse<String> ours = post("/tokenize", request, KEY);
                assertThat(ours.statusCode()).as(ours.body()).isEqualTo(200);
                assertThat(ours.headers().firstValue("X-Lazarus-Backend")).contains("kt");
                assertThat(JSON.readTree(ours.body())).as(request.toString())
                        .isEqualTo(JSON.readTree(direct(plain, "/tokenize", request).body()));
            }
            ObjectNode detokenize = JSON.createObjectNode().put("model", "kt");
            detokenize.set("tokens", JSON.readTree(direct(plain, "/tokenize",
                    JSON.createObjectNode().put("content", text).put("add_special", true)).body()).get("tokens"));
            assertThat(JSON.readTree(post("/detokenize", detokenize, KEY).body())).as(text)
                    .isEqualTo(JSON.readTree(direct(plain, "/detokenize", detokenize).body()));
        }
    }

    @Test
    void aModelNoneOfWhoseBackendsServesTheEndpointIsA400NamingBoth() throws Exception {
        ObjectNode request = JSON.createObjectNode().put("model", "kt").put("input", "hello");
        HttpResponse<String> answer = post("/v1/embeddings", request, KEY);
        assertThat(answer.statusCode()).isEqualTo(400);
        JsonNode error = JSON.readTree(answer.body()).get("error");
        assertThat(error.get("type").asString()).isEqualTo("invalid_request_error");
        assertThat(error.get("param").asString()).isEqualTo("model");
        assertThat(error.get("message").asString()).contains("'kt'").contains("/v1/embeddings");

        HttpResponse<String> unknown = post("/v1/rerank", JSON.createObjectNode().put("model", "nope")
                .put("query", "q").set("documents", JSON.createArrayNode().add("d")), KEY);
        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(JSON.readTree(unknown.body()).get("error").get("code").asString()).isEqualTo("model_not_found");

        HttpResponse<String> noInput = post("/v1/embeddings", JSON.createObjectNode().put("model", "embed"), KEY);
        assertThat(noInput.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(noInput.body()).get("error").get("param").asString()).isEqualTo("input");
    }

    @Test
    void ktNativeRefusesWhatIsNoTokenIdOfItsModelAsTheClientsError() throws Exception {
        awaitLoaded("kt");
        ObjectNode request = JSON.createObjectNode().put("model", "kt");
        request.putArray("tokens").add(1).add(1_000_000);
        HttpResponse<String> answer = post("/detokenize", request, KEY);
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(400);
        JsonNode error = JSON.readTree(answer.body()).get("error");
        assertThat(error.get("param").asString()).isEqualTo("tokens");
        assertThat(error.get("message").asString()).contains("1000000");
    }

    @Test
    void theApiKeyGuardsTheEndpointsOutsideV1() throws Exception {
        ObjectNode request = JSON.createObjectNode().put("model", "tiny").put("content", "hello");
        for (String path : List.of("/tokenize", "/detokenize", "/rerank", "/v1/embeddings")) {
            HttpResponse<String> answer = post(path, request, null);
            assertThat(answer.statusCode()).as(path).isEqualTo(401);
            assertThat(JSON.readTree(answer.body()).get("error").get("code").asString()).isEqualTo("invalid_api_key");
        }
    }

    @Test
    void theModelListSaysWhichEndpointsEachModelServes() throws Exception {
        HttpResponse<String> list = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/models"))
                .header("Authorization", "Bearer " + KEY).timeout(Duration.ofSeconds(30)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        List<String> kt = new ArrayList<>();
        List<String> embed = new ArrayList<>();
        for (JsonNode model : JSON.readTree(list.body()).get("data")) {
            List<String> into = switch (model.get("id").asString()) {
                case "kt" -> kt;
                case "embed" -> embed;
                default -> new ArrayList<>();
            };
            model.get("endpoints").forEach(e -> into.add(e.asString()));
        }
        assertThat(kt).contains("/v1/chat/completions", "/tokenize", "/detokenize")
                .doesNotContain("/v1/embeddings", "/v1/rerank");
        assertThat(embed).contains("/v1/chat/completions", "/v1/embeddings", "/v1/rerank", "/tokenize");
    }

    /** Waits (bounded) until the backend behind {@code model} has loaded: it answers 503 until then. */
    private void awaitLoaded(String model) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        ObjectNode probe = JSON.createObjectNode().put("model", model).put("content", "x");
        int status;
        while ((status = post("/tokenize", probe, KEY).statusCode()) == 503 && System.nanoTime() < deadline) {
            Thread.sleep(200);
        }
        assertThat(status).as("model '%s' loaded within 120 s", model).isEqualTo(200);
    }

    /** What the gateway calls the model a llama-server serves: its file's name, without the server's directories. */
    private static String servedModel() {
        return RealLlamaServers.model().getFileName().toString();
    }

    private static List<ObjectNode> tokenizeRequests(String model, String text) {
        return List.of(JSON.createObjectNode().put("model", model).put("content", text),
                JSON.createObjectNode().put("model", model).put("content", text).put("add_special", true),
                JSON.createObjectNode().put("model", model).put("content", text).put("with_pieces", true));
    }

    private HttpResponse<String> post(String path, JsonNode body, String key) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header("Content-Type", "application/json").timeout(Duration.ofSeconds(60))
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
        if (key != null) {
            request.header("Authorization", "Bearer " + key);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> direct(LlamaServerProcess server, String path, JsonNode body) throws Exception {
        HttpResponse<String> answer = http.send(HttpRequest.newBuilder(server.url().resolve(path))
                .header("Content-Type", "application/json").timeout(Duration.ofSeconds(60))
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body))).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
        return answer;
    }

    private String prometheus() throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/prometheus"))
                .timeout(Duration.ofSeconds(30)).GET().build(), HttpResponse.BodyHandlers.ofString()).body();
    }
}
