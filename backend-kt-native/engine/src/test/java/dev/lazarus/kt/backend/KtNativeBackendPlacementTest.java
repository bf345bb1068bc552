package dev.lazarus.kt.backend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendConfigException;
import dev.lazarus.backend.api.ExpertPlacementView;
import dev.lazarus.backend.api.ExpertPlacementView.PlacementSnapshot;
import dev.lazarus.backend.api.ExpertPlacementView.TierStats;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The expert placement view of the backend on the embedded model, CPU-only (gpu: off). */
class KtNativeBackendPlacementTest {

    @TempDir
    Path dir;

    static Map<String, Object> settings(Object... extra) {
        Map<String, Object> s = new HashMap<>(Map.of("model", "classpath:models/lazarus-tiny-moe.gguf", "threads", 2,
                "context-size", 256, "model-name", "tiny", "gpu", "off"));
        for (int i = 0; i < extra.length; i += 2) {
            s.put((String) extra[i], extra[i + 1]);
        }
        return s;
    }

    @Test
    void showsTheMapAndHitRatesAndRebalancesOnDemand() throws Exception {
        Path stats = dir.resolve("routing.json");
        KtNativeBackend backend = ((KtNativeBackend) new KtNativeBackendFactory().create(new BackendConfig("kt", "kt-native",
                settings("expert-placement", "frequency", "ram-expert-ratio", "0.25", "expert-stats", stats.toString()))))
                .awaitReady(Duration.ofMinutes(1));
        try {
            ExpertPlacementView view = backend;
            backend.chat(ChatCompletionRequest.builder().model("tiny").messages(List.of(ChatMessage.user("Hello")))
                    .maxTokens(4).temperature(0.0).build()).collectList().block(Duration.ofMinutes(1));
            PlacementSnapshot snap = view.expertPlacement().orElseThrow();
            assertThat(snap.strategy()).isEqualTo("frequency");
            assertThat(snap.device()).isNull();
            assertThat(snap.layers()).hasSize(4);
            assertThat(snap.layers().getFirst().tiers()).hasSize(8);
            TierStats ram = snap.tiers().get(1);
            assertThat(ram.tier()).isEqualTo("ram");
            assertThat(ram.experts()).isEqualTo(8); // a quarter of 4 layers x 8 experts
            assertThat(ram.bytes()).isLessThanOrEqualTo(ram.budgetBytes());
            assertThat(snap.tiers().get(2).budgetBytes()).isEqualTo(-1);
            assertThat(snap.tiers().stream().mapToLong(TierStats::computations).sum()).isPositive();

            PlacementSnapshot after = view.rebalanceExperts().orElseThrow();
            assertThat(after.rebalances()).isEqualTo(snap.rebalances() + 1);
            // frequency now ranks by what the chat routed: the RAM tier holds the most used experts
            long hottestRam = 0, coldestOther = Long.MAX_VALUE;
            for (var layer : after.layers()) {
                for (int e = 0; e < layer.tiers().size(); e++) {
                    if (layer.tiers().get(e).equals("ram")) {
                        hottestRam = Math.max(hottestRam, layer.activations().get(e));
                    }
                }
            }
            assertThat(hottestRam).isPositive();
            assertThat(Files.exists(stats)).isTrue();
        } finally {
            backend.close();
        }
    }

    @Test
    void conflictingBudgetsAreAConfigError() {
        assertThatThrownBy(() -> new KtNativeBackendFactory().create(new BackendConfig("kt", "kt-native",
                settings("gpu-expert-ratio", "0.1", "gpu-experts-per-layer", 2))))
                .isInstanceOf(BackendConfigException.class).hasMessageContaining("gpu-expert");
        assertThatThrownBy(() -> new KtNativeBackendFactory().create(new BackendConfig("kt", "kt-native",
                settings("expert-placement", "hottest"))))
                .isInstanceOf(BackendConfigException.class).hasMessageContaining("hottest");
        assertThatThrownBy(() -> new KtNativeBackendFactory().create(new BackendConfig("kt", "kt-native",
                settings("ram-expert-bytes", "lots"))))
                .isInstanceOf(BackendConfigException.class).hasMessageContaining("ram-expert-bytes");
        assertThatThrownBy(() -> new KtNativeBackendFactory().create(new BackendConfig("kt", "kt-native",
                settings("cache-type-k", "q8_k"))))
                .isInstanceOf(BackendConfigException.class).hasMessageContaining("cache-type-k")
                .hasMessageContaining("q8_k").hasMessageContaining("iq4_nl");
    }
}
