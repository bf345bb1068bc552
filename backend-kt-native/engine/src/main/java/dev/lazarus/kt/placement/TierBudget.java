package dev.lazarus.kt.placement;

import dev.lazarus.kt.model.ExpertWeights;
import java.util.function.ToLongFunction;

/**
 * How much of the experts a tier may hold, in one of the forms resolved against the model:
 * a count per MoE layer (KTransformers' {@code --kt-num-gpu-experts}), a fraction of all expert
 * bytes, a number of bytes, or the CPU tier's experts (the RAM tier's default, {@link CpuTier}).
 */
public sealed interface TierBudget {

    TierBudget NONE = new Bytes(0);

    /**
     * The budget in bytes for this model's experts, each of which takes {@code size} bytes in the tier (the RAM
     * tier's repacked copies are larger than the file's blocks): a count per layer or a ratio then still means that
     * many experts or that share of them, and a byte budget is a limit on the tier's memory.
     */
    long resolve(ExpertCatalog catalog, ToLongFunction<ExpertWeights> size);

    /** {@link #resolve(ExpertCatalog, ToLongFunction)} for a tier that holds the experts as stored in the file. */
    default long resolve(ExpertCatalog catalog) {
        return resolve(catalog, ExpertWeights::bytes);
    }

    record PerLayer(int experts) implements TierBudget {
        public PerLayer {
            if (experts < 0) {
                throw new IllegalArgumentException("experts per layer must be >= 0, got " + experts);
            }
        }

        @Override
        public long resolve(ExpertCatalog catalog, ToLongFunction<ExpertWeights> size) {
            long total = 0;
            for (int slot = 0; slot < catalog.layerCount(); slot++) {
                total += size.applyAsLong(catalog.weights(slot, 0)) * Math.min(experts, catalog.expertsPerLayer());
            }
            return total;
        }
    }

    record Ratio(double fraction) implements TierBudget {
        public Ratio {
            if (!(fraction >= 0 && fraction <= 1)) {
                throw new IllegalArgumentException("expert ratio must be in [0, 1], got " + fraction);
            }
        }

        @Override
        public long resolve(ExpertCatalog catalog, ToLongFunction<ExpertWeights> size) {
            return (long) Math.floor(catalog.totalBytes(size) * fraction);
        }
    }

    /**
     * The RAM tier's default ({@code cpu-experts}): every expert the GPU tier does not take, i.e. the CPU tier, when
     * {@code mode} is {@link CpuExperts#AUTO} and their copies fit in the host's memory (decided when the placement is
     * installed, {@link CpuTierBudget}), or always ({@link CpuExperts#RAM}). Resolved without knowing the GPU's share it
     * is every expert ({@link CpuExperts#MAPPED}: none).
     */
    record CpuTier(CpuExperts mode) implements TierBudget {
        public static final CpuTier AUTO = new CpuTier(CpuExperts.AUTO);

        @Override
        public long resolve(ExpertCatalog catalog, ToLongFunction<ExpertWeights> size) {
            return mode == CpuExperts.MAPPED ? 0 : catalog.totalBytes(size);
        }
    }

    /** Where the CPU tier's experts live by default ({@code cpu-experts}). */
    enum CpuExperts {
        /** Copied into the RAM tier where the copies fit in memory (with a margin), memory-mapped otherwise. */
        AUTO,
        /** Copied into the RAM tier, whether or not the memory check passes. */
        RAM,
        /** Read in place from the mapped GGUF. */
        MAPPED
    }

    record Bytes(long bytes) implements TierBudget {
        public Bytes {
            if (bytes < 0) {
                throw new IllegalArgumentException("byte budget must be >= 0, got " + bytes);
            }
        }

        @Override
        public long resolve(ExpertCatalog catalog, ToLongFunction<ExpertWeights> size) {
            return bytes;
        }
    }
}
