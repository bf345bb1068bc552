package dev.lazarus.kt.placement;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendConfigException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * Expert placement settings of a kt-native backend (documented in backend-kt-native/README.md).
 *
 * @param strategy          how experts are ranked for the fast tiers
 * @param gpuBudget         what the GPU tier may hold
 * @param ramBudget         what the repacked RAM tier may hold (the rest stays memory-mapped)
 * @param gpu               whether to use a GPU
 * @param gpuKernels        the PTX module with the expert kernels (compiled by nvcc ahead of time)
 * @param gpuDevice         CUDA device ordinal
 * @param statsFile         routing statistics loaded at start and saved at rebalances and on close; null: none
 * @param rebalanceInterval how often {@code dynamic} re-places experts
 * @param gpuLayers         run attention, norms and the router of every block on the GPU as well (the
 *                          GPU layer path; needs the GPU tier), CPU-tier experts overlapping the GPU's
 */
public record PlacementConfig(PlacementStrategy strategy, TierBudget gpuBudget, TierBudget ramBudget, GpuMode gpu,
                              Path gpuKernels, int gpuDevice, Path statsFile, Duration rebalanceInterval,
                              boolean gpuLayers) {

    public enum GpuMode {
        /** Use a GPU when the CUDA driver, a device and the kernels are there; CPU-only otherwise. */
        AUTO,
        OFF,
        /** A GPU is required: loading fails without one. */
        ON
    }

    /** Everything memory-mapped on the CPU: placement changes nothing. */
    public static PlacementConfig cpuOnly() {
        return new PlacementConfig(PlacementStrategy.UNIFORM, TierBudget.NONE, TierBudget.NONE, GpuMode.OFF, null, 0,
                null, Duration.ofSeconds(30), false);
    }

    public PlacementConfig withStrategy(PlacementStrategy s) {
        return new PlacementConfig(s, gpuBudget, ramBudget, gpu, gpuKernels, gpuDevice, statsFile, rebalanceInterval, gpuLayers);
    }

    public PlacementConfig withGpu(GpuMode mode, TierBudget budget, Path kernels) {
        return new PlacementConfig(strategy, budget, ramBudget, mode, kernels, gpuDevice, statsFile, rebalanceInterval, gpuLayers);
    }

    public PlacementConfig withRam(TierBudget budget) {
        return new PlacementConfig(strategy, gpuBudget, budget, gpu, gpuKernels, gpuDevice, statsFile, rebalanceInterval, gpuLayers);
    }

    public PlacementConfig withGpuLayers(boolean on) {
        return new PlacementConfig(strategy, gpuBudget, ramBudget, gpu, gpuKernels, gpuDevice, statsFile, rebalanceInterval, on);
    }

    public PlacementConfig withStatsFile(Path file) {
        return new PlacementConfig(strategy, gpuBudget, ramBudget, gpu, gpuKernels, gpuDevice, file, rebalanceInterval, gpuLayers);
    }

    public static PlacementConfig from(BackendConfig c) {
        try {
            PlacementStrategy strategy = PlacementStrategy.of(c.string("expert-placement", "uniform"));
            String mode = c.string("gpu", "auto").trim().toUpperCase(Locale.ROOT);
            if (!List.of("AUTO", "ON", "OFF").contains(mode)) {
                throw new BackendConfigException(c.id(), "gpu", "setting 'gpu' must be auto, on or off, got '" + c.string("gpu", "") + "'");
            }
            GpuMode gpu = GpuMode.valueOf(mode);
            String kernels = c.string("gpu-kernels", null);
            String stats = c.string("expert-stats", null);
            Duration interval = c.duration("rebalance-interval", Duration.ofSeconds(30));
            if (interval.isNegative() || interval.isZero()) {
                throw new BackendConfigException(c.id(), "rebalance-interval", "setting 'rebalance-interval' must be positive");
            }
            int device = c.integer("gpu-device", 0);
            String layers = c.string("gpu-layers", "off").trim().toLowerCase(Locale.ROOT);
            if (!List.of("on", "off").contains(layers)) {
                throw new BackendConfigException(c.id(), "gpu-layers", "setting 'gpu-layers' must be on or off, got '" + layers + "'");
            }
            return new PlacementConfig(strategy, budget(c, "gpu"), budget(c, "ram"), gpu,
                    kernels == null ? null : Path.of(kernels), device, stats == null ? null : Path.of(stats), interval,
                    layers.equals("on"));
        } catch (BackendConfigException e) {
            throw e;
        } catch (IllegalArgumentException e) {
            throw new BackendConfigException(c.id(), "expert placement", "invalid expert placement setting: " + e.getMessage());
        }
    }

    /**
     * Without a RAM budget the RAM tier holds the CPU tier's experts ({@code cpu-experts}, default {@code auto}): all
     * of them when their copies fit ({@link CpuTierBudget}: with a GPU tier in the host's available memory less a
     * margin, without one in a quarter of the machine's memory), none otherwise; {@code ram} copies them anyway,
     * {@code mapped} keeps them in the mapped file. An explicit {@code ram-expert-*} budget and {@code cpu-experts}
     * are two answers to one question: at most one is given.
     */
    private static TierBudget defaultRamBudget(BackendConfig c) {
        String value = c.string("cpu-experts", "auto").trim().toUpperCase(Locale.ROOT);
        if (!List.of("AUTO", "RAM", "MAPPED").contains(value)) {
            throw new BackendConfigException(c.id(), "cpu-experts", "setting 'cpu-experts' must be auto, ram or mapped, got '"
                    + c.string("cpu-experts", "") + "'");
        }
        return new TierBudget.CpuTier(TierBudget.CpuExperts.valueOf(value));
    }

    /** {@code <tier>-experts-per-layer}, {@code <tier>-expert-ratio} or {@code <tier>-expert-bytes}: at most one. */
    private static TierBudget budget(BackendConfig c, String tier) {
        String perLayer = tier + "-experts-per-layer", ratio = tier + "-expert-ratio", bytes = tier + "-expert-bytes";
        List<String> given = List.of(perLayer, ratio, bytes).stream().filter(c::has).toList();
        if (given.size() > 1) {
            throw new BackendConfigException(c.id(), given.get(1), "settings " + given + " state the same budget twice: use one");
        }
        if (given.isEmpty()) {
            return tier.equals("ram") ? defaultRamBudget(c) : TierBudget.NONE;
        }
        if (tier.equals("ram") && c.has("cpu-experts")) {
            throw new BackendConfigException(c.id(), "cpu-experts", "settings 'cpu-experts' and '" + given.getFirst()
                    + "' both say where the CPU's experts go: use one");
        }
        String key = given.getFirst();
        String value = c.string(key, "");
        try {
            if (key.equals(perLayer)) {
                return new TierBudget.PerLayer(c.integer(key, 0));
            }
            if (key.equals(ratio)) {
                return new TierBudget.Ratio(Double.parseDouble(value.trim()));
            }
            return new TierBudget.Bytes(ByteSize.parse(value));
        } catch (IllegalArgumentException e) {
            throw new BackendConfigException(c.id(), key, "setting '" + key + "' is invalid ('" + value + "'): " + e.getMessage());
        }
    }
}
