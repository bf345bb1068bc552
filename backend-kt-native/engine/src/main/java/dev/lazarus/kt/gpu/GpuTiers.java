package dev.lazarus.kt.gpu;

import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.model.Model;
import dev.lazarus.kt.placement.DeviceTier;
import dev.lazarus.kt.placement.ExpertPlacement;
import dev.lazarus.kt.placement.PlacementConfig;
import dev.lazarus.kt.placement.PlacementConfig.GpuMode;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Opens the GPU tier the settings ask for. With {@code gpu: auto} a missing driver, device or kernel
 * file means CPU-only (said once per process, not per backend); with {@code gpu: on} it is an error.
 */
public final class GpuTiers {

    private static final System.Logger LOG = System.getLogger(GpuTiers.class.getName());
    private static final AtomicBoolean TOLD_CPU_ONLY = new AtomicBoolean();

    private GpuTiers() {}

    /**
     * Moves the model's layers onto the GPU (the {@link GpuLayerPath}) when {@code gpu-layers} is on and the
     * GPU tier is CUDA; logs why not otherwise (the CPU blocks keep running). {@code sequences}: how many
     * sequences may keep a device KV cache at once. Closed with the tier.
     */
    public static Optional<GpuLayerPath> installLayers(Model model, GgufFile file, ExpertPlacement placement,
                                                       DeviceTier device, int sequences) {
        return placement == null ? Optional.empty() : installLayers(model, file, placement.config(), placement, device,
                sequences);
    }

    /**
     * As above, for dense models too: {@code placement} is null when the model has no experts to place, and
     * the settings come from {@code config}.
     */
    public static Optional<GpuLayerPath> installLayers(Model model, GgufFile file, PlacementConfig config,
                                                       ExpertPlacement placement, DeviceTier device, int sequences) {
        if (!config.gpuLayers()) {
            return Optional.empty();
        }
        if (placement == null && !model.expertLayers().isEmpty()) {
            throw new IllegalArgumentException("a model with experts needs its expert placement");
        }
        if (!(device instanceof CudaExpertTier cuda)) {
            LOG.log(Level.WARNING, "gpu-layers: on, but no CUDA tier; layers stay on the CPU");
            return Optional.empty();
        }
        try {
            GpuLayerPath path = GpuLayerPath.install(model, file, placement, cuda, sequences);
            LOG.log(Level.INFO, "GPU layer path on {0}: {1} MiB of attention, norm, router, dense FFN and head weights",
                    cuda.describe(), path.weightBytes() >> 20);
            return Optional.of(path);
        } catch (IllegalArgumentException e) {
            LOG.log(Level.WARNING, "gpu-layers: on, but the layers stay on the CPU: {0}", e.getMessage());
            return Optional.empty();
        }
    }

    /** The device tier, or empty when the engine runs its experts on the CPU only. */
    public static Optional<DeviceTier> open(PlacementConfig config) {
        if (config.gpu() == GpuMode.OFF) {
            return Optional.empty();
        }
        StringBuilder whyNot = new StringBuilder();
        Optional<CudaDriver> driver = CudaDriver.load(whyNot);
        try {
            if (driver.isPresent()) {
                CudaDriver cu = driver.get();
                cu.init();
                int devices = cu.deviceCount();
                if (devices <= config.gpuDevice()) {
                    whyNot.append("CUDA device ").append(config.gpuDevice()).append(" not present (").append(devices)
                            .append(" found)");
                } else if (config.gpuKernels() == null || !Files.isRegularFile(config.gpuKernels())) {
                    whyNot.append("setting 'gpu-kernels' must name the compiled PTX file (")
                            .append(config.gpuKernels() == null ? "not set" : config.gpuKernels() + " missing").append(')');
                } else {
                    CudaExpertTier tier = CudaExpertTier.open(cu, config.gpuDevice(), config.gpuKernels());
                    LOG.log(Level.INFO, "GPU expert tier on {0}", tier.describe());
                    return Optional.of(tier);
                }
            }
        } catch (CudaException e) {
            whyNot.append(e.getMessage());
        }
        if (config.gpu() == GpuMode.ON) {
            throw new IllegalStateException("gpu: on, but no GPU tier: " + whyNot);
        }
        if (TOLD_CPU_ONLY.compareAndSet(false, true)) {
            LOG.log(Level.INFO, "no GPU tier, experts run on the CPU only: {0}", whyNot);
        }
        return Optional.empty();
    }
}
