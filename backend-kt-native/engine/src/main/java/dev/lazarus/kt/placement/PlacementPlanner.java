package dev.lazarus.kt.placement;

import dev.lazarus.kt.model.ExpertWeights;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;

/**
 * Turns a strategy, per-tier byte budgets and routing scores into a {@link PlacementPlan}: the
 * strategy orders all experts by preference, then the GPU takes experts along that order while they
 * fit its budget (and its kernels support their weight type), RAM takes the next ones while they fit
 * its budget, and everything else stays memory-mapped. Each tier counts an expert in the bytes it takes
 * there: the GPU its stored bytes, RAM the size of its (possibly repacked) copy.
 */
public final class PlacementPlanner {

    private PlacementPlanner() {}

    /**
     * @param ramBytes     the bytes an expert takes in the RAM tier
     * @param scores       routing score per [slot][expert] (activation counts); higher is hotter
     * @param gpuSupports  whether the GPU tier can compute an expert (its weight type has kernels)
     */
    public static PlacementPlan plan(PlacementStrategy strategy, ExpertCatalog catalog, long gpuBudget,
                                     long ramBudget, ToLongFunction<ExpertWeights> ramBytes, double[][] scores,
                                     Predicate<ExpertWeights> gpuSupports) {
        Tier[][] tiers = new Tier[catalog.layerCount()][catalog.expertsPerLayer()];
        long gpuLeft = gpuBudget;
        long ramLeft = ramBudget;
        for (int[] key : order(strategy, catalog, scores)) {
            int s = key[0], e = key[1];
            ExpertWeights w = catalog.weights(s, e);
            long bytes = w.bytes();
            long inRam = ramBytes.applyAsLong(w);
            if (bytes <= gpuLeft && gpuSupports.test(w)) {
                tiers[s][e] = Tier.GPU;
                gpuLeft -= bytes;
            } else if (inRam <= ramLeft) {
                tiers[s][e] = Tier.RAM;
                ramLeft -= inRam;
            } else {
                tiers[s][e] = Tier.MMAP;
            }
        }
        return new PlacementPlan(tiers);
    }

    /** All (slot, expert) keys, most preferred first. */
    static List<int[]> order(PlacementStrategy strategy, ExpertCatalog catalog, double[][] scores) {
        int layers = catalog.layerCount();
        int experts = catalog.expertsPerLayer();
        // Round-robin over layers, expert ids in order: any prefix holds the same count per layer (±1).
        List<int[]> uniform = new ArrayList<>(layers * experts);
        for (int e = 0; e < experts; e++) {
            for (int s = 0; s < layers; s++) {
                uniform.add(new int[] {s, e});
            }
        }
        Comparator<int[]> hottest = Comparator.comparingDouble(k -> -scores[k[0]][k[1]]);
        List<int[]> ordered = new ArrayList<>(uniform);
        switch (strategy) {
            case UNIFORM -> { }
            // A stable sort keeps the uniform order among equal scores: with no statistics it is uniform.
            case FREQUENCY, DYNAMIC -> ordered.sort(hottest);
            case FRONT_LOADING -> ordered.sort(Comparator.<int[]>comparingInt(k -> k[0]).thenComparing(hottest));
        }
        return ordered;
    }
}
