package dev.lazarus.gateway.realserver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.gateway.resilience.HealthMonitor;
import dev.lazarus.gateway.routing.BackendRegistry;
import dev.lazarus.kt.synthetic.SyntheticModels;
import dev.lazarus.kt.testsupport.LlamaServerProcess;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A required tool call through the gateway's Responses ({@code tool_choice: "required"}) and Messages
 * ({@code tool_choice: {"type": "any"}}) endpoints in front of kt-native, on a generated model with gpt-oss's template, whose call grammar
 * allows no free text: random weights write a call's header from the first token. The answer must be the one a real
 * llama-server on the same model gives to the chat request the gateway translates it to (non-streamed: its stream
 * withholds an unfinished call's text, which random weights never finish, as the call's content type may run on).
 * ({@code {"type": "tool", "name": ...}} is {@code auto} on both, unconstrained; llama-server answers this model's free
 * text under gpt-oss's template with a 500, "does not match the expected peg-native format".)
 */
@Tag("llama-server")
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class RequiredToolsKtNativeGatewayTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    static final String TOOLS_RESPONSES = """
            [{"type":"function","name":"set_level","description":"Set a level","parameters":{"type":"object",
              "properties":{"level":{"type":"integer","minimum":1,"maximum":7},"mode":{"enum":[1,2,3]}},
              "required":["level","mode"]}},
             {"type":"function","name":"now","description":"The time","parameters":{"type":"object","properties":{}}}]""";
    static final String TOOLS_CHAT = """
            [{"type":"function","function":{"name":"set_level","description":"Set a level","parameters":{"type":"object",
              "properties":{"level":{"type":"integer","minimum":1,"maximum":7},"mode":{"enum":[1,2,3]}},
              "required":["level","mode"]}}},
             {"type":"function","function":{"name":"now","description":"The time","parameters":{"type":"object","properties":{}}}}]""";
    static final String TOOLS_ANTHROPIC = """
            [{"name":"set_level","description":"Set a level","input_schema":{"type":"object",
              "properties":{"level":{"type":"integer","minimum":1,"maximum":7},"mode":{"enum":[1,2,3]}},
              "required":["level","mode"]}},
             {"name":"now","description":"The time","input_schema":{"type":"object","properties":{}}}]""";

    static Path dir;
    static LlamaServerProcess server;

    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) throws IOException {
        dir = Files.createTempDirectory("lazarus-required-tools");
        Path model = SyntheticModels.write(SyntheticModels.tinyLlama(), dir.resolve("gpt-oss-template.gguf"), template());
        server = LlamaServerProcess.start(model, "-c", "2048", "-np", "1", "--jinja", "--no-webui");
        registry.add("lazarus.backends[0].id", () -> "kt");
        registry.add("lazarus.backends[0].kind", () -> "kt-native");
        registry.add("lazarus.backends[0].settings.model", model::toString);
        registry.add("lazarus.backends[0].settings.context-size", () -> "2048");
        registry.add("lazarus.backends[0].settings.warmup-tokens", () -> "0");
        registry.add("lazarus.backends[0].settings.model-name", () -> "kt-m");
        RealLlamaServers.route(registry, 0, "kt-m", "kt");
        registry.add("lazarus.policy.store-path", () -> dir.resolve("policy").toString());
    }

    @AfterAll
    static void stop() throws IOException {
        server.close();
        try (var files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    @LocalServerPort
    int port;

    @Autowired
    BackendRegistry backends;

    @Autowired
    HealthMonitor monitor;

    @BeforeEach
    void loaded() throws InterruptedException {
        BackendsUp.await(backends, monitor, Duration.ofMinutes(2), List.of("kt"));
    }

    @Test
    void responsesRequiredToolChoice() throws Exception {
        JsonNode response = post("/v1/responses", "{\"model\":\"kt-m\",\"input\":\"Set the level to 3.\",\"max_output_tokens\":64,"
                + "\"temperature\":0,\"store\":false,\"tool_choice\":\"required\",\"tools\":" + TOOLS_RESPONSES + "}");
        JsonNode theirs = llamaServer("\"required\"");
        String text = response.path("output").get(0).path("content").get(0).path("text").asString();
        assertThat(text).isEqualTo(theirs.path("choices").get(0).path("message").path("content").asString());
        assertThat(response.path("usage").path("input_tokens").asInt()).isEqualTo(theirs.path("usage").path("prompt_tokens").asInt());
        assertThat(response.path("usage").path("output_tokens").asInt()).isEqualTo(64);
        assertThat(text).as("the call grammar shaped it").containsAnyOf(" to=functions.", "<|channel|>");
    }

    @Test
    void messagesAnyToolChoice() throws Exception {
        JsonNode message = post("/v1/messages", "{\"model\":\"kt-m\",\"max_tokens\":64,\"temperature\":0,"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"Set the level to 3.\"}],\"tool_choice\":{\"type\":\"any\"},"
                + "\"tools\":" + TOOLS_ANTHROPIC + "}");
        JsonNode theirs = llamaServer("\"required\"");
        String text = message.path("content").get(0).path("text").asString();
        assertThat(text).isEqualTo(theirs.path("choices").get(0).path("message").path("content").asString());
        assertThat(message.path("usage").path("input_tokens").asInt()).isEqualTo(theirs.path("usage").path("prompt_tokens").asInt());
        assertThat(message.path("stop_reason").asString()).isEqualTo("max_tokens");
        assertThat(text).as("the call grammar shaped it").containsAnyOf(" to=functions.", "<|channel|>");
    }

    /** llama-server's answer to the chat request the gateway makes of the Responses or Messages one. */
    private static JsonNode llamaServer(String toolChoice) {
        return JSON.readTree(server.post("/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":"
                + "\"Set the level to 3.\"}],\"max_tokens\":64,\"temperature\":0,\"tool_choice\":" + toolChoice + ",\"tools\":"
                + TOOLS_CHAT + "}"));
    }

    private JsonNode post(String path, String body) throws Exception {
        try (HttpClient http = HttpClient.newHttpClient()) {
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                    .timeout(Duration.ofMinutes(2)).header("Content-Type", "application/json")
                    .header("anthropic-version", "2023-06-01")
                    .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
            return JSON.readTree(response.body());
        }
    }

    private static String template() {
        try (InputStream in = RequiredToolsKtNativeGatewayTest.class.getResourceAsStream("/chat-templates/gpt-oss.jinja")) {
            if (in == null) {
                throw new IllegalStateException("gpt-oss.jinja is not on the test class path");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
