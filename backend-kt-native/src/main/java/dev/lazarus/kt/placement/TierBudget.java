package dev.lazarus.kt.placement;

/**
 * How much of the experts a tier may hold, in one of three forms resolved against the model:
 * a count per MoE layer (KTransformers' {@code --kt-num-gpu-experts}), a fraction of all expert
 * bytes, or a number of bytes.
 */
public sealed interface TierBudget {

    TierBudget NONE = new Bytes(0);

    /** The budget in bytes for this model's experts. */
    long resolve(ExpertCatalog catalog);

    record PerLayer(int experts) implements TierBudget {
        public PerLayer {
            if (experts < 0) {
                throw new IllegalArgumentException("experts per layer must be >= 0, got " + experts);
            }
        }

        @Override
        public long resolve(ExpertCatalog catalog) {
            long total = 0;
            for (int slot = 0; slot < catalog.layerCount(); slot++) {
                total += catalog.expertBytes(slot, 0) * Math.min(experts, catalog.expertsPerLayer());
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
        public long resolve(ExpertCatalog catalog) {
            return (long) Math.floor(catalog.totalBytes() * fraction);
        }
    }

    record Bytes(long bytes) implements TierBudget {
        public Bytes {
            if (bytes < 0) {
                throw new IllegalArgumentException("byte budget must be >= 0, got " + bytes);
            }
        }

        @Override
        public long resolve(ExpertCatalog catalog) {
            return bytes;
        }
    }
}
