package dev.lazarus.kt.placement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendConfigException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PlacementConfigTest {

    static PlacementConfig parse(Map<String, Object> settings) {
        return PlacementConfig.from(new BackendConfig("kt", "kt-native", settings));
    }

    @Test
    void defaultsAreUniformAutoGpuNothingOnTheGpuAndAllInRamWhenItFits() {
        PlacementConfig c = parse(Map.of());
        assertThat(c.strategy()).isEqualTo(PlacementStrategy.UNIFORM);
        assertThat(c.gpu()).isEqualTo(PlacementConfig.GpuMode.AUTO);
        assertThat(c.gpuBudget()).isEqualTo(TierBudget.NONE);
        assertThat(c.ramBudget()).as("the CPU tier's experts in RAM where they fit").isEqualTo(TierBudget.CpuTier.AUTO);
        assertThat(parse(Map.of("ram-expert-ratio", 0)).ramBudget()).as("how to keep a model mapped")
                .isEqualTo(new TierBudget.Ratio(0));
        assertThat(c.rebalanceInterval()).isEqualTo(Duration.ofSeconds(30));
        assertThat(c.gpuLayers()).isFalse();
    }

    @Test
    void cpuExpertsForcesEitherPlaceAndIsOneAnswerWithTheRamBudget() {
        assertThat(parse(Map.of("cpu-experts", "ram")).ramBudget())
                .isEqualTo(new TierBudget.CpuTier(TierBudget.CpuExperts.RAM));
        assertThat(parse(Map.of("cpu-experts", " Mapped ")).ramBudget())
                .isEqualTo(new TierBudget.CpuTier(TierBudget.CpuExperts.MAPPED));
        assertThat(parse(Map.of("cpu-experts", "auto")).ramBudget()).isEqualTo(TierBudget.CpuTier.AUTO);
        assertThatThrownBy(() -> parse(Map.of("cpu-experts", "disk")))
                .isInstanceOf(BackendConfigException.class).hasMessageContaining("cpu-experts");
        assertThatThrownBy(() -> parse(Map.of("cpu-experts", "ram", "ram-expert-ratio", 0.5)))
                .isInstanceOf(BackendConfigException.class).hasMessageContaining("cpu-experts")
                .hasMessageContaining("ram-expert-ratio");
    }

    @Test
    void readsEveryBudgetForm() {
        PlacementConfig c = parse(Map.of("expert-placement", "front-loading", "gpu", "on", "gpu-kernels", "/k/experts.ptx",
                "gpu-experts-per-layer", 4, "ram-expert-bytes", "1.5GiB", "expert-stats", "/s.json",
                "rebalance-interval", "5m", "gpu-device", 1));
        assertThat(c.strategy()).isEqualTo(PlacementStrategy.FRONT_LOADING);
        assertThat(c.gpu()).isEqualTo(PlacementConfig.GpuMode.ON);
        assertThat(c.gpuKernels()).isEqualTo(Path.of("/k/experts.ptx"));
        assertThat(c.gpuBudget()).isEqualTo(new TierBudget.PerLayer(4));
        assertThat(c.ramBudget()).isEqualTo(new TierBudget.Bytes(3L << 29));
        assertThat(c.statsFile()).isEqualTo(Path.of("/s.json"));
        assertThat(c.rebalanceInterval()).isEqualTo(Duration.ofMinutes(5));
        assertThat(c.gpuDevice()).isEqualTo(1);
        assertThat(parse(Map.of("gpu-expert-ratio", 0.1)).gpuBudget()).isEqualTo(new TierBudget.Ratio(0.1));
        assertThat(parse(Map.of("ram-expert-bytes", "512MiB")).ramBudget()).isEqualTo(new TierBudget.Bytes(512L << 20));
        assertThat(parse(Map.of("expert-placement", "DYNAMIC")).strategy()).isEqualTo(PlacementStrategy.DYNAMIC);
        assertThat(parse(Map.of("gpu-layers", "on")).gpuLayers()).isTrue();
        assertThat(parse(Map.of("gpu-layers", "Off")).gpuLayers()).isFalse();
    }

    @Test
    void rejectsNonsenseNamingTheSetting() {
        assertThatThrownBy(() -> parse(Map.of("gpu-expert-ratio", 1.5)))
                .isInstanceOf(BackendConfigException.class).hasMessageContaining("gpu-expert-ratio");
        assertThatThrownBy(() -> parse(Map.of("ram-expert-ratio", "0.2", "ram-expert-bytes", "1GiB")))
                .isInstanceOf(BackendConfigException.class).hasMessageContaining("ram-expert");
        assertThatThrownBy(() -> parse(Map.of("gpu", "maybe")))
                .isInstanceOf(BackendConfigException.class).hasMessageContaining("auto, on or off");
        assertThatThrownBy(() -> parse(Map.of("gpu-layers", "yes")))
                .isInstanceOf(BackendConfigException.class).hasMessageContaining("gpu-layers");
        assertThatThrownBy(() -> parse(Map.of("rebalance-interval", "0s")))
                .isInstanceOf(BackendConfigException.class).hasMessageContaining("rebalance-interval");
        assertThatThrownBy(() -> parse(Map.of("gpu-experts-per-layer", -1)))
                .isInstanceOf(BackendConfigException.class).hasMessageContaining("gpu-experts-per-layer");
    }
}
