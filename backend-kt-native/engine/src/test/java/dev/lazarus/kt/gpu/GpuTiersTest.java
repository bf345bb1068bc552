package dev.lazarus.kt.gpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.kt.placement.PlacementConfig;
import dev.lazarus.kt.placement.PlacementConfig.GpuMode;
import dev.lazarus.kt.placement.TierBudget;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** Opening the GPU tier degrades to CPU-only unless the settings insist. Runs everywhere. */
class GpuTiersTest {

    static PlacementConfig config(GpuMode mode, Path kernels) {
        return PlacementConfig.cpuOnly().withGpu(mode, new TierBudget.Ratio(0.5), kernels);
    }

    @Test
    void offNeverTouchesTheDriver() {
        assertThat(GpuTiers.open(config(GpuMode.OFF, null))).isEmpty();
    }

    @Test
    void withoutKernelsAutoRunsOnTheCpuAndOnFailsSayingWhy() {
        Path missing = Path.of("/nonexistent/experts.ptx");
        assertThat(GpuTiers.open(config(GpuMode.AUTO, missing))).isEmpty();
        assertThatThrownBy(() -> GpuTiers.open(config(GpuMode.ON, missing)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageMatching("(?s)gpu: on, but no GPU tier: .*(libcuda|CUDA|gpu-kernels).*");
    }
}
