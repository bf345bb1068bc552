package dev.lazarus.backend.api;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Implemented by backends that place mixture-of-experts weights across memory tiers (kt-native), so
 * an admin API can show where experts live and trigger a re-placement. Optional: check with
 * {@code backend instanceof ExpertPlacementView}.
 */
public interface ExpertPlacementView {

    /** The current placement; empty while the model loads or when it has no routed experts. */
    Optional<PlacementSnapshot> expertPlacement();

    /**
     * Re-places experts now from the routing statistics gathered so far (blocking: it copies weights
     * between tiers while requests keep being served) and returns the placement afterwards.
     */
    Optional<PlacementSnapshot> rebalanceExperts();

    /**
     * @param strategy   {@code uniform}, {@code frequency}, {@code front-loading} or {@code dynamic}
     * @param device     the accelerator in use ("NVIDIA H100 (cuda:0)"), or null when CPU-only
     * @param rebalances placements applied since start, the initial one included
     * @param tiers      fastest first: {@code gpu}, {@code ram}, {@code mmap}
     * @param layers     one entry per MoE layer
     */
    record PlacementSnapshot(String strategy, String device, @JsonProperty("taken_at") Instant takenAt, long rebalances, List<TierStats> tiers,
                             List<LayerPlacement> layers) {
        public PlacementSnapshot {
            tiers = List.copyOf(tiers);
            layers = List.copyOf(layers);
        }
    }

    /**
     * @param tier         {@code gpu}, {@code ram} or {@code mmap}
     * @param experts      experts placed in this tier now
     * @param bytes        the bytes their weights take in this tier (the RAM tier counts its repacked copies,
     *                     which may be larger than the GGUF blocks)
     * @param budgetBytes  what the tier may hold; -1 when unbounded
     * @param computations expert computations served by this tier since start
     * @param byteHitRate  share of all expert weight bytes read since start that this tier served (0..1)
     */
    record TierStats(String tier, int experts, long bytes, @JsonProperty("budget_bytes") long budgetBytes,
                     long computations, @JsonProperty("byte_hit_rate") double byteHitRate) {}

    /**
     * @param layer       block number
     * @param tiers       the tier of each expert, by expert id
     * @param activations tokens routed to each expert, by expert id (saved counts included)
     */
    record LayerPlacement(int layer, List<String> tiers, List<Long> activations) {
        public LayerPlacement {
            tiers = List.copyOf(tiers);
            activations = List.copyOf(activations);
        }
    }
}
