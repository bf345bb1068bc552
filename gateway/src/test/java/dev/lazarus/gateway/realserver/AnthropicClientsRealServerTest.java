package dev.lazarus.gateway.realserver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.synthetic.ByteBpeVocab;
import dev.lazarus.kt.testsupport.LlamaServerProcess;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
 * Anthropic's clients through the gateway's Messages endpoint, answered by a real llama-server: the official
 * {@code @anthropic-ai/sdk} (create, stream, countTokens, a tool round trip, error shapes), Claude Code's
 * {@code claude -p} completing a turn, and the same request answered alike by llama-server's own
 * {@code /v1/messages} and by the gateway's translation onto chat completions.
 *
 * <p>Claude Code's prompt (its system prompt and tool definitions) is some 27k tokens of the test model's
 * byte-level vocabulary: the server gets a context to hold it, and its end-of-turn token a bias so that a turn
 * of random weights ends within a few tokens as a turn ({@code end_turn}), which Claude Code needs to finish.
 */
@Tag("llama-server")
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class AnthropicClientsRealServerTest {

    private static final int CONTEXT = 40960;
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final String KEY = "anthropic-key";

    static LlamaServerProcess server;

    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) {
        int endOfTurn = ByteBpeVocab.standard().eot();
        server = RealLlamaServers.startParallel(1, CONTEXT, "--override-kv",
                "llama.context_length=int:" + CONTEXT, "--logit-bias", endOfTurn + "+8", "-n", "64");
        registry.add("lazarus.backends[0].id", () -> "llama");
        registry.add("lazarus.backends[0].kind", () -> "llamacpp");
        registry.add("lazarus.backends[0].settings.url", () -> server.url().toString());
        registry.add("lazarus.backends[0].settings.messages", () -> "translate"); // the translation is under test
        // Claude Code's first prompt takes minutes on a CI runner's CPU before its first token
        registry.add("lazarus.backends[0].settings.first-token-timeout", () -> "400s");
        registry.add("lazarus.resilience.attempt.first-token-timeout", () -> "400s");
        RealLlamaServers.route(registry, 0, "tiny", "llama");
        registry.add("lazarus.security.api-keys[0]", () -> KEY);
    }

    @AfterAll
    static void stop() {
        RealLlamaServers.stopAll();
    }

    @LocalServerPort
    int port;

    private String gateway() {
        return "http://127.0.0.1:" + port;
    }

    @Test
    void theAnthropicSdk() {
        assertAnthropicSdkWorks(gateway(), KEY, "tiny");
    }

    /** Runs {@code anthropic-sdk.cjs} against a gateway and judges every call it made. */
    static void assertAnthropicSdkWorks(String gateway, String key, String model) {
        assertAnthropicSdkWorks(gateway, key, model, Map.of());
    }

    /** As {@link #assertAnthropicSdkWorks(String, String, String)}, the script given {@code env} too; its output. */
    static JsonNode assertAnthropicSdkWorks(String gateway, String key, String model, Map<String, String> env) {
        Map<String, String> all = new java.util.HashMap<>(env);
        all.putAll(Map.of("ANTHROPIC_BASE_URL", gateway, "ANTHROPIC_API_KEY", key, "MODEL", model));
        RealClients.Run run = RealClients.script("anthropic-sdk.cjs", all, Duration.ofMinutes(5));
        assertThat(run.exitCode()).as(run.stderr()).isZero();
        JsonNode out = JSON.readTree(run.stdout());

        JsonNode create = out.get("create");
        assertMessage(create);
        assertThat(create.at("/usage/input_tokens").asInt() + create.at("/usage/cache_read_input_tokens").asInt())
                .as("the prompt's tokens").isEqualTo(out.at("/countTokens/input_tokens").asInt());

        List<String> events = new ArrayList<>();
        out.get("streamEvents").forEach(e -> events.add(e.asString()));
        assertThat(events.getFirst()).isEqualTo("message_start");
        assertThat(events.subList(events.size() - 2, events.size())).containsExactly("message_delta", "message_stop");
        JsonNode streamed = out.get("streamMessage");
        assertMessage(streamed);
        assertThat(text(streamed)).as("greedy decoding, streamed or not").isEqualTo(text(create));
        assertThat(streamed.at("/usage/output_tokens").asInt()).isEqualTo(create.at("/usage/output_tokens").asInt());

        assertThat(out.at("/countTokens/input_tokens").asInt()).isGreaterThan(5);
        assertMessage(out.get("toolTurn"));
        assertMessage(out.get("toolResultTurn"));
        assertThat(out.at("/toolResultTurn/usage/input_tokens").asInt()
                + out.at("/toolResultTurn/usage/cache_read_input_tokens").asInt())
                .as("the tool call and its result reached the prompt")
                .isGreaterThan(out.at("/toolTurn/usage/input_tokens").asInt()
                        + out.at("/toolTurn/usage/cache_read_input_tokens").asInt());

        JsonNode unknown = out.get("unknownModel");
        assertThat(unknown.get("status").asInt()).isEqualTo(404);
        assertThat(unknown.get("name").asString()).isEqualTo("NotFoundError");
        assertThat(unknown.at("/body/type").asString()).isEqualTo("error");
        assertThat(unknown.at("/body/error/type").asString()).isEqualTo("not_found_error");
        assertThat(unknown.at("/body/error/message").asString()).contains("no-such-model");
        JsonNode missing = out.get("missingMaxTokens");
        assertThat(missing.get("status").asInt()).isEqualTo(400);
        assertThat(missing.at("/body/error/type").asString()).isEqualTo("invalid_request_error");
        return out;
    }

    /** The same request to llama-server's own Messages endpoint and to the gateway's: the same answer. */
    @Test
    void answersAsLlamaServersOwnMessagesEndpoint() throws Exception {
        String request = """
                {"model": "tiny", "max_tokens": 8, "temperature": 0, "system": "You are terse.",
                 "messages": [{"role": "user", "content": "Name a river."}]}
                """;
        JsonNode direct = JSON.readTree(post(server.url() + "/v1/messages", request));
        JsonNode through = JSON.readTree(post(gateway() + "/v1/messages", request));
        assertThat(names(through)).containsAll(names(direct));
        assertThat(through.get("type")).isEqualTo(direct.get("type"));
        assertThat(through.get("role")).isEqualTo(direct.get("role"));
        assertThat(through.get("stop_reason")).isEqualTo(direct.get("stop_reason"));
        assertThat(text(through)).isEqualTo(text(direct));
        assertThat(names(through.get("usage"))).containsAll(names(direct.get("usage")));
        assertThat(through.at("/usage/output_tokens")).isEqualTo(direct.at("/usage/output_tokens"));
        assertThat(through.at("/usage/input_tokens").asInt() + through.at("/usage/cache_read_input_tokens").asInt())
                .isEqualTo(direct.at("/usage/input_tokens").asInt()
                        + direct.at("/usage/cache_read_input_tokens").asInt());

        String streamed = request.replace("\"max_tokens\": 8,", "\"max_tokens\": 8, \"stream\": true,");
        List<String> directEvents = eventNames(post(server.url() + "/v1/messages", streamed));
        List<String> gatewayEvents = eventNames(post(gateway() + "/v1/messages", streamed));
        assertThat(gatewayEvents.stream().filter(e -> !e.equals("ping")).toList())
                .as("Anthropic's ping aside").isEqualTo(directEvents);

        String count = "{\"model\": \"tiny\", \"system\": \"You are terse.\", \"messages\": "
                + "[{\"role\": \"user\", \"content\": \"Name a river.\"}]}";
        assertThat(JSON.readTree(post(gateway() + "/v1/messages/count_tokens", count)))
                .isEqualTo(JSON.readTree(post(server.url() + "/v1/messages/count_tokens", count)));
    }

    /** Claude Code as users run it, pointed at the gateway, without network: one turn, answered. */
    @Test
    void claudeCodeCompletesATurn() throws IOException {
        RealClients.claudeTurn(gateway(), "tiny", KEY, Duration.ofMinutes(8));
    }

    static void assertMessage(JsonNode message) {
        assertThat(message.get("id").asString()).startsWith("msg_");
        assertThat(message.get("type").asString()).isEqualTo("message");
        assertThat(message.get("role").asString()).isEqualTo("assistant");
        assertThat(message.get("stop_reason").asString()).isIn("end_turn", "max_tokens", "tool_use");
        assertThat(message.at("/usage/output_tokens").asInt()).isPositive();
        message.get("content").forEach(block -> assertThat(block.get("type").asString())
                .isIn("text", "tool_use", "thinking"));
    }

    private static String text(JsonNode message) {
        StringBuilder text = new StringBuilder();
        message.get("content").forEach(block -> text.append(block.path("text").asString("")));
        return text.toString();
    }

    private static Set<String> names(JsonNode node) {
        return new HashSet<>(node.propertyNames());
    }

    private static List<String> eventNames(String stream) {
        return stream.lines().filter(l -> l.startsWith("event: ")).map(l -> l.substring("event: ".length())).toList();
    }

    private static String post(String url, String body) throws Exception {
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(url))
                .header("content-type", "application/json").header("x-api-key", KEY)
                .header("anthropic-version", "2023-06-01").timeout(Duration.ofMinutes(2))
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return response.body();
    }
}
