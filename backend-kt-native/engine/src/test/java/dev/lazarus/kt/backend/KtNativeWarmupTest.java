package dev.lazarus.kt.backend;

import static dev.lazarus.kt.backend.KtNativeBackendPlacementTest.settings;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendConfigException;
import dev.lazarus.backend.api.BackendHealth;
import dev.lazarus.backend.api.ExpertPlacementView.LayerPlacement;
import dev.lazarus.backend.api.ExpertPlacementView.PlacementSnapshot;
import dev.lazarus.backend.api.ExpertPlacementView.TierStats;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code warmup-tokens}: tokens generated at load, before the backend is ready, whose routing is then forgotten. */
class KtNativeWarmupTest {

    @Test
    void warmsUpBeforeReadyAndForgetsWhatTheWarmUpRouted() throws Exception {
        KtNativeBackend backend = ((KtNativeBackend) new KtNativeBackendFactory().create(new BackendConfig("kt", "kt-native",
                settings("warmup-tokens", 40, "max-sequences", 2, "ram-expert-ratio", "0.5"))))
                .awaitReady(Duration.ofMinutes(1));
        try {
            BackendHealth health = backend.health().block(Duration.ofSeconds(30));
            assertThat(health.status()).isEqualTo(BackendHealth.Status.UP);
            assertThat((Long) health.details().get("forward_passes")).as("the warm-up ran the engine")
                    .isGreaterThanOrEqualTo(20L);

            PlacementSnapshot warm = backend.expertPlacement().orElseThrow();
            assertThat(routed(warm)).as("the warm-up's routing is not traffic").isZero();
            assertThat(warm.tiers().stream().mapToLong(TierStats::computations).sum()).isZero();

            backend.chat(ChatCompletionRequest.builder().model("tiny").messages(List.of(ChatMessage.user("Hello")))
                    .maxTokens(4).temperature(0.0).build()).collectList().block(Duration.ofMinutes(1));
            PlacementSnapshot served = backend.expertPlacement().orElseThrow();
            assertThat(routed(served)).as("traffic after the warm-up is counted").isPositive();
            assertThat(served.tiers().stream().mapToLong(TierStats::computations).sum()).isPositive();
        } finally {
            backend.close();
        }
    }

    @Test
    void refusesANegativeCount() {
        assertThatThrownBy(() -> new KtNativeBackendFactory().create(new BackendConfig("kt", "kt-native",
                settings("warmup-tokens", -1))))
                .isInstanceOf(BackendConfigException.class).hasMessageContaining("warmup-tokens");
    }

    private static long routed(PlacementSnapshot snapshot) {
        return snapshot.layers().stream().map(LayerPlacement::activations).flatMap(List::stream)
                .mapToLong(Long::longValue).sum();
    }
}
