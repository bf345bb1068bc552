package dev.lazarus.kt.placement;

import dev.lazarus.kt.model.Model;

/**
 * The RAM tier with plain copies (ggml's blocks as stored, no repacking): what repacking buys, measured by
 * {@code KtEngineBench}'s {@code ram-copy} against {@code ram}. It was the engine's
 * {@code -Dlazarus.kt.ram-tier.repack=false}; the engine always repacks ({@link RamTier#REPACKING}).
 */
public final class PlainRamTier {

    private PlainRamTier() {}

    /** {@link ExpertPlacement#install} on the CPU with every expert in the RAM tier, copied as stored. */
    public static ExpertPlacement install(Model model, String modelName, PlacementConfig config) {
        return ExpertPlacement.install(model, modelName, config, null, new RamTier(false));
    }
}
