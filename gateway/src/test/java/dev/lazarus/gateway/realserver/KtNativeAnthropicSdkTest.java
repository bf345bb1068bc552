package dev.lazarus.gateway.realserver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.gateway.resilience.HealthMonitor;
import dev.lazarus.gateway.routing.BackendRegistry;
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
import org.springframework.test.context.TestPropertySource;
import tools.jackson.databind.JsonNode;

/**
 * {@code @anthropic-ai/sdk} through the gateway as it ships: the default configuration's kt-native backend with the
 * bundled {@code lazarus-tiny-moe} model, answering the Messages API on its chat path. A second kt-native backend
 * serves a generated model with a Hermes-format (ChatML) template as {@code tiny-calling}, where a named
 * {@code tool_choice} makes the model write the {@code tool_use}: the SDK's round trip with a call the model made.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@TestPropertySource(properties = {"lazarus.security.api-keys[0]=kt-key",
        "lazarus.policy.store-path=${java.io.tmpdir}/lazarus-kt-anthropic-policy"})
class KtNativeAnthropicSdkTest {

    private static final String CALLING = "tiny-calling";

    /** A list is bound from one source: the shipped backend again (without its warm-up), and the calling one. */
    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) {
        registry.add("lazarus.backends[0].id", () -> "embedded");
        registry.add("lazarus.backends[0].kind", () -> "kt-native");
        registry.add("lazarus.backends[0].settings.model", () -> "classpath:models/lazarus-tiny-moe.gguf");
        registry.add("lazarus.backends[0].settings.warmup-tokens", () -> "0");
        registry.add("lazarus.backends[1].id", () -> "calling");
        registry.add("lazarus.backends[1].kind", () -> "kt-native");
        registry.add("lazarus.backends[1].settings.model", () -> RealLlamaServers.model().toString());
        registry.add("lazarus.backends[1].settings.model-name", () -> CALLING);
        registry.add("lazarus.backends[1].settings.context-size", () -> "4096");
        registry.add("lazarus.backends[1].settings.warmup-tokens", () -> "0");
        registry.add("lazarus.models[0].name", () -> "lazarus-tiny-moe");
        registry.add("lazarus.models[0].backends[0]", () -> "embedded");
        registry.add("lazarus.models[1].name", () -> CALLING);
        registry.add("lazarus.models[1].backends[0]", () -> "calling");
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

    @Test
    void theAnthropicSdk() {
        JsonNode out = AnthropicClientsRealServerTest.assertAnthropicSdkWorks("http://127.0.0.1:" + port, "kt-key",
                "lazarus-tiny-moe", Map.of("CALLING_MODEL", CALLING));

        JsonNode forced = out.get("forcedTurn");
        AnthropicClientsRealServerTest.assertMessage(forced);
        assertThat(forced.get("stop_reason").asString()).as(forced.toString()).isEqualTo("tool_use");
        assertThat(forced.get("content")).as("the model's call and nothing else").singleElement().satisfies(use -> {
            assertThat(use.get("type").asString()).isEqualTo("tool_use");
            assertThat(use.get("id").asString()).isNotBlank();
            assertThat(use.get("name").asString()).isEqualTo("city_weather");
            assertThat(use.get("input").propertyNames()).as("the schema's one required property, no other")
                    .containsExactly("city");
            assertThat(use.at("/input/city").asString()).isIn("Paris", "Rome");
        });
        JsonNode streamed = out.get("forcedStreamMessage");
        assertThat(streamed.get("stop_reason").asString()).isEqualTo("tool_use");
        assertThat(streamed.at("/content/0/input")).as("greedy, streamed or not").isEqualTo(forced.at("/content/0/input"));
        List<String> deltas = new ArrayList<>();
        out.get("forcedStreamDeltas").forEach(d -> deltas.add(d.asString()));
        assertThat(deltas).isNotEmpty().containsOnly("input_json_delta");

        assertThat(out.get("forcedToolResult").asString()).as("the client ran the tool").isIn("18 C, sunny", "22 C, cloudy");
        JsonNode answer = out.get("forcedAnswer");
        AnthropicClientsRealServerTest.assertMessage(answer);
        assertThat(answer.get("stop_reason").asString()).isIn("end_turn", "max_tokens");
        assertThat(answer.at("/content/0/type").asString()).as("a final answer").isEqualTo("text");
        assertThat(answer.at("/usage/input_tokens").asInt() + answer.at("/usage/cache_read_input_tokens").asInt())
                .as("the call and its result reached the prompt")
                .isGreaterThan(forced.at("/usage/input_tokens").asInt() + forced.at("/usage/cache_read_input_tokens").asInt());
    }
}
