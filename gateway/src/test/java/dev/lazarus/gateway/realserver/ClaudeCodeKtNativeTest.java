package dev.lazarus.gateway.realserver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.gateway.resilience.HealthMonitor;
import dev.lazarus.gateway.routing.BackendRegistry;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;

/**
 * Claude Code's {@code claude -p} completing a turn through the gateway's Messages endpoint in front of kt-native
 * with the embedded {@code lazarus-tiny-moe}. Its prompt (system prompt and tool definitions) needs a context beyond
 * the model's trained 2,048 ({@code context-size}); it asks for 32k output tokens, which the gateway caps
 * ({@code lazarus.messages.max-tokens}): the capped answer ends the turn, which Claude Code needs to finish.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ClaudeCodeKtNativeTest {

    private static final String KEY = "kt-key";
    private static final int CAP = 24;

    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) {
        registry.add("lazarus.backends[0].id", () -> "embedded");
        registry.add("lazarus.backends[0].kind", () -> "kt-native");
        registry.add("lazarus.backends[0].settings.model", () -> "classpath:models/lazarus-tiny-moe.gguf");
        registry.add("lazarus.backends[0].settings.context-size", () -> "65536");
        registry.add("lazarus.backends[0].settings.max-sequences", () -> "1");
        registry.add("lazarus.models[0].name", () -> "lazarus-tiny-moe");
        registry.add("lazarus.models[0].backends[0]", () -> "embedded");
        registry.add("lazarus.security.api-keys[0]", () -> KEY);
        registry.add("lazarus.messages.max-tokens", () -> String.valueOf(CAP));
        // A prompt of tens of thousands of tokens before its first token, on a shared two-core machine.
        registry.add("lazarus.resilience.attempt.first-token-timeout", () -> "15m");
        registry.add("lazarus.resilience.breaker.slow-time-to-first-token", () -> "20m");
        registry.add("lazarus.routing.overall-timeout", () -> "20m");
    }

    @LocalServerPort
    int port;

    @Autowired
    BackendRegistry backends;

    @Autowired
    HealthMonitor monitor;

    @BeforeEach
    void modelLoaded() throws InterruptedException {
        BackendsUp.await(backends, monitor, Duration.ofMinutes(2), List.of("embedded"));
    }

    @Test
    void claudeCodeCompletesATurn() throws Exception {
        JsonNode result = RealClients.claudeTurn("http://127.0.0.1:" + port, "lazarus-tiny-moe", KEY,
                Duration.ofMinutes(18));
        assertThat(result.at("/usage/output_tokens").asInt()).as("the gateway's cap").isBetween(1, CAP);
    }
}
