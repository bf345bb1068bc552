package dev.lazarus.kt.gpu;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.kt.backend.KtNativeBackend;
import dev.lazarus.kt.backend.KtNativeBackendFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The attention order a kt-native backend states in its model metadata ({@code flash_attention}, what the decision
 * gate aligns with the oracle's) is the one it computes: the GPU layer path's F32 attention is the non-flash order
 * whatever {@code flash-attention} says (GpuParityCheck measures it), the CPU path follows the setting. Run on the fake
 * driver of {@link FakeCudaDriverTest}.
 */
@ExtendWith(FakeCudaDriver.class)
class LayerPathAttentionFactTest {

    @TempDir
    static Path dir;

    @ParameterizedTest
    @CsvSource({"on, on, off", "off, on, on", "on, off, off", "off, off, off"})
    void theStatedOrderIsTheComputedOne(String gpuLayers, String flash, String stated) throws Exception {
        Path model = GpuParityCheck.tinyModel(dir);
        Path kernels = Files.writeString(dir.resolve("kernels.ptx"), "// fake module: the fake driver ignores it\n");
        KtNativeBackend backend = (KtNativeBackend) new KtNativeBackendFactory().create(new BackendConfig("kt",
                "kt-native", Map.of("model", model.toString(), "threads", 1, "context-size", 256, "model-name", "m",
                "gpu", "on", "gpu-kernels", kernels.toString(), "gpu-layers", gpuLayers, "flash-attention", flash)));
        try {
            backend.awaitReady(Duration.ofMinutes(1));
            Map<String, Object> facts = backend.describe().models().getFirst().metadata();
            assertThat(facts.get("device")).isEqualTo("cpu+gpu");
            assertThat(facts.get("flash_attention")).as(facts.toString()).isEqualTo(stated);
        } finally {
            backend.close();
        }
    }
}
