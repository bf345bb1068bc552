package dev.lazarus.gateway.realserver;

import dev.lazarus.gateway.resilience.HealthMonitor;
import dev.lazarus.gateway.routing.BackendRegistry;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.TestPropertySource;

/**
 * {@code @anthropic-ai/sdk} through the gateway as it ships: the default configuration's kt-native backend with the
 * bundled {@code lazarus-tiny-moe} model, answering the Messages API on its chat path.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@TestPropertySource(properties = {"lazarus.security.api-keys[0]=kt-key",
        // a list is bound from one source: the shipped backend again, without its warm-up
        "lazarus.backends[0].id=embedded", "lazarus.backends[0].kind=kt-native",
        "lazarus.backends[0].settings.model=classpath:models/lazarus-tiny-moe.gguf",
        "lazarus.backends[0].settings.warmup-tokens=0",
        "lazarus.policy.store-path=${java.io.tmpdir}/lazarus-kt-anthropic-policy"})
class KtNativeAnthropicSdkTest {

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
    void theAnthropicSdk() {
        AnthropicClientsRealServerTest.assertAnthropicSdkWorks("http://127.0.0.1:" + port, "kt-key",
                "lazarus-tiny-moe");
    }
}
