package dev.lazarus.kt.placement;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.model.ExpertWeights;
import java.util.function.ToLongFunction;
import org.junit.jupiter.api.Test;

class PlacementPlannerTest {

    static final ExpertCatalog CATALOG = Catalogs.of(1, 4, 8);
    static final long E = Catalogs.expertBytes();
    /** A RAM tier that holds experts as stored. */
    static final ToLongFunction<ExpertWeights> STORED = ExpertWeights::bytes;

    static double[][] noScores() {
        return new double[4][8];
    }

    @Test
    void uniformSpreadsTheBudgetEvenlyOverLayers() {
        PlacementPlan plan = PlacementPlanner.plan(PlacementStrategy.UNIFORM, CATALOG, 10 * E, 0, STORED, noScores(), w -> true);
        assertThat(plan.count(Tier.GPU)).isEqualTo(10);
        for (int s = 0; s < 4; s++) {
            assertThat(plan.count(s, Tier.GPU)).isBetween(2, 3);
        }
        assertThat(plan.count(Tier.MMAP)).isEqualTo(22);
    }

    @Test
    void theCpuTiersBudgetTakesWhatTheGpuLeaves() {
        long all = 32 * E; // 4 layers × 8 experts
        assertThat(TierBudget.CpuTier.AUTO.resolve(CATALOG, STORED)).as("without the GPU's share: every expert").isEqualTo(all);
        assertThat(new TierBudget.CpuTier(TierBudget.CpuExperts.MAPPED).resolve(CATALOG, STORED)).isZero();
        PlacementPlan plan = PlacementPlanner.plan(PlacementStrategy.UNIFORM, CATALOG, 3 * E,
                CpuTierBudget.needed(CATALOG, STORED, 3 * E), STORED, noScores(), w -> true);
        assertThat(plan.count(Tier.GPU)).isEqualTo(3);
        assertThat(plan.count(Tier.RAM)).as("the rest, after the GPU's share").isEqualTo(29);
        assertThat(plan.count(Tier.MMAP)).isZero();
    }

    @Test
    void neverExceedsATierBudget() {
        PlacementPlan plan = PlacementPlanner.plan(PlacementStrategy.UNIFORM, CATALOG, 5 * E + E / 2, 3 * E - 1,
                STORED, noScores(), w -> true);
        assertThat(plan.bytes(CATALOG, Tier.GPU)).isEqualTo(5 * E);
        assertThat(plan.bytes(CATALOG, Tier.RAM)).isEqualTo(2 * E);
    }

    @Test
    void frequencyPicksTheHottestExpertsWhereverTheyAre() {
        double[][] scores = noScores();
        scores[3][7] = 100;
        scores[3][6] = 90;
        scores[0][2] = 80;
        scores[2][5] = 70;
        scores[1][1] = 60;
        PlacementPlan plan = PlacementPlanner.plan(PlacementStrategy.FREQUENCY, CATALOG, 3 * E, 2 * E, STORED, scores, w -> true);
        assertThat(plan.tier(3, 7)).isEqualTo(Tier.GPU);
        assertThat(plan.tier(3, 6)).isEqualTo(Tier.GPU);
        assertThat(plan.tier(0, 2)).isEqualTo(Tier.GPU);
        assertThat(plan.tier(2, 5)).isEqualTo(Tier.RAM);
        assertThat(plan.tier(1, 1)).isEqualTo(Tier.RAM);
        assertThat(plan.count(Tier.GPU)).isEqualTo(3);
        assertThat(plan.count(Tier.RAM)).isEqualTo(2);
    }

    @Test
    void frontLoadingFillsEarlyLayersFirstHottestFirstWithinALayer() {
        double[][] scores = noScores();
        scores[1][6] = 5;
        scores[1][3] = 9;
        scores[3][0] = 1000; // hot, but in a late layer
        PlacementPlan plan = PlacementPlanner.plan(PlacementStrategy.FRONT_LOADING, CATALOG, 10 * E, 0, STORED, scores, w -> true);
        assertThat(plan.count(0, Tier.GPU)).isEqualTo(8);
        assertThat(plan.count(1, Tier.GPU)).isEqualTo(2);
        assertThat(plan.tier(1, 3)).isEqualTo(Tier.GPU);
        assertThat(plan.tier(1, 6)).isEqualTo(Tier.GPU);
        assertThat(plan.count(2, Tier.GPU) + plan.count(3, Tier.GPU)).isZero();
    }

    @Test
    void expertsTheGpuCannotComputeGoToTheNextTier() {
        PlacementPlan plan = PlacementPlanner.plan(PlacementStrategy.UNIFORM, CATALOG, 32 * E, 4 * E, STORED, noScores(), w -> false);
        assertThat(plan.count(Tier.GPU)).isZero();
        assertThat(plan.count(Tier.RAM)).isEqualTo(4);
    }

    @Test
    void budgetFormsResolveAgainstTheModel() {
        assertThat(new TierBudget.PerLayer(2).resolve(CATALOG)).isEqualTo(8 * E);
        assertThat(new TierBudget.PerLayer(99).resolve(CATALOG)).isEqualTo(32 * E);
        assertThat(new TierBudget.Ratio(0.25).resolve(CATALOG)).isEqualTo(8 * E);
        assertThat(new TierBudget.Bytes(123).resolve(CATALOG)).isEqualTo(123);
        PlacementPlan perLayer = PlacementPlanner.plan(PlacementStrategy.UNIFORM, CATALOG,
                new TierBudget.PerLayer(3).resolve(CATALOG), 0, STORED, noScores(), w -> true);
        for (int s = 0; s < 4; s++) {
            assertThat(perLayer.count(s, Tier.GPU)).isEqualTo(3);
        }
    }

    @Test
    void theRamTierCountsEachExpertInTheBytesItTakesThere() {
        ToLongFunction<ExpertWeights> packed = w -> w.bytes() + w.bytes() / 10; // a layout 10 % larger than the file's
        PlacementPlan plan = PlacementPlanner.plan(PlacementStrategy.UNIFORM, CATALOG, 0, 4 * E, packed, noScores(), w -> true);
        assertThat(plan.count(Tier.RAM)).as("4 experts' file bytes hold only 3 larger copies").isEqualTo(3);

        // a count per layer or a ratio still means that many experts: resolved in the tier's bytes
        long perLayer = new TierBudget.PerLayer(2).resolve(CATALOG, packed);
        assertThat(perLayer).isEqualTo(8 * (E + E / 10));
        PlacementPlan two = PlacementPlanner.plan(PlacementStrategy.UNIFORM, CATALOG, 0, perLayer, packed, noScores(), w -> true);
        for (int s = 0; s < 4; s++) {
            assertThat(two.count(s, Tier.RAM)).isEqualTo(2);
        }
        long all = new TierBudget.Ratio(1).resolve(CATALOG, packed);
        assertThat(all).isEqualTo(CATALOG.totalBytes(packed)).isEqualTo(32 * (E + E / 10));
        assertThat(PlacementPlanner.plan(PlacementStrategy.UNIFORM, CATALOG, 0, all, packed, noScores(), w -> true)
                .count(Tier.RAM)).isEqualTo(32);
        // the GPU tier still counts stored bytes
        assertThat(PlacementPlanner.plan(PlacementStrategy.UNIFORM, CATALOG, 4 * E, 0, packed, noScores(), w -> true)
                .count(Tier.GPU)).isEqualTo(4);
    }

    @Test
    void catalogAddressesLayersBySlot() {
        assertThat(CATALOG.slotOf(1)).isZero();
        assertThat(CATALOG.slotOf(4)).isEqualTo(3);
        assertThat(CATALOG.layerId(2)).isEqualTo(3);
        assertThat(CATALOG.totalBytes()).isEqualTo(32 * E);
    }
}
