package dev.lazarus.kt.gpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.lazarus.kt.placement.PlacementConfig;
import dev.lazarus.kt.placement.PlacementConfig.GpuMode;
import dev.lazarus.kt.placement.TierBudget;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The CUDA expert tier against the CPU path on a tiny qwen3moe (Q8_0), 100 % and 30 % of the expert
 * bytes on the GPU. Needs libcuda, a device and the compiled kernels (system property or environment
 * {@code LAZARUS_GPU_KERNELS}: the PTX of src/main/cuda/experts.cu); skipped, saying which is missing,
 * elsewhere. scripts/device/gpu-check.sh runs the same comparison without Maven.
 */
@Tag("gpu")
class GpuParityTest {

    /** The kernels when a GPU tier can open here; otherwise the test is skipped with the reason. */
    static Path kernelsOrSkip() {
        String path = System.getProperty("lazarus.gpu.kernels", System.getenv("LAZARUS_GPU_KERNELS"));
        assumeTrue(path != null && Files.isRegularFile(Path.of(path)),
                "no compiled GPU kernels: set LAZARUS_GPU_KERNELS to experts.ptx (nvcc -ptx src/main/cuda/experts.cu)");
        Path kernels = Path.of(path);
        PlacementConfig probe = PlacementConfig.cpuOnly().withGpu(GpuMode.AUTO, new TierBudget.Ratio(1), kernels);
        var tier = GpuTiers.open(probe);
        assumeTrue(tier.isPresent(), "no CUDA driver or device here (libcuda.so.1 / cuInit): GPU tier untestable");
        tier.get().close();
        return kernels;
    }

    @ParameterizedTest
    @ValueSource(doubles = {1.0, 0.3})
    void gpuExpertsGiveTheCpuLogits(double share, @org.junit.jupiter.api.io.TempDir Path dir) {
        Path kernels = kernelsOrSkip();
        GpuParityCheck.Result r = GpuParityCheck.run(GpuParityCheck.tinyModel(dir), kernels, share, 16);
        assertThat(r.gpuExperts()).isPositive();
        assertThat(r.gpuByteHitRate()).isPositive();
        assertThat(r.maxAbsDiff()).as(r.toString()).isLessThanOrEqualTo(GpuParityCheck.TOLERANCE);
    }
}
