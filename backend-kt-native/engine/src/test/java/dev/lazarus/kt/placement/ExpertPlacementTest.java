package dev.lazarus.kt.placement;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.ExpertPlacementView.PlacementSnapshot;
import dev.lazarus.backend.api.ExpertPlacementView.TierStats;
import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.model.ExpertWeights;
import dev.lazarus.kt.model.ForwardBatch;
import dev.lazarus.kt.model.KvCache;
import dev.lazarus.kt.model.Model;
import dev.lazarus.kt.model.RoutingStats;
import dev.lazarus.kt.model.SwiGlu;
import dev.lazarus.kt.model.TinyModels;
import dev.lazarus.kt.parallel.Parallel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Placement on a real (tiny qwen3moe) model, with a CPU stand-in for the GPU: same numbers, any placement. */
class ExpertPlacementTest {

    static final int[] PROMPT = {3, 17, 42, 5, 9, 60, 1};

    @TempDir
    Path dir;

    Parallel parallel;
    GgufFile file;
    CpuStandInDevice device;

    @BeforeEach
    void open() {
        parallel = Parallel.ofThreads(2);
        file = GgufFile.open(TinyModels.qwen3moe(dir, 7));
        device = new CpuStandInDevice();
    }

    @AfterEach
    void close() {
        device.close();
        file.close();
        parallel.close();
    }

    Model model() {
        return Model.load(file, parallel);
    }

    /** Greedy decode from the prompt: the logits of every step, concatenated. */
    static List<float[]> generate(Model model, int steps) {
        KvCache cache = model.newCache(TinyModels.CONTEXT);
        List<float[]> out = new ArrayList<>();
        int token = PROMPT[0];
        for (int p = 0; p < PROMPT.length + steps; p++) {
            token = p < PROMPT.length ? PROMPT[p] : token;
            float[] logits = model.forward(ForwardBatch.single(token, p, cache))[0];
            out.add(logits);
            if (p >= PROMPT.length - 1) {
                token = argmax(logits);
            }
        }
        return out;
    }

    /**
     * Same logits up to float rounding: the Vector API's lane reduction may add in another order once
     * C2 compiles a kernel, so runs differ in the last bits; an expert read from a wrong or freed copy
     * changes logits by far more than this.
     */
    static void assertSameLogits(List<float[]> actual, List<float[]> expected) {
        assertThat(actual).hasSameSizeAs(expected);
        for (int i = 0; i < expected.size(); i++) {
            assertThat(argmax(actual.get(i))).as("greedy token %d", i).isEqualTo(argmax(expected.get(i)));
            for (int v = 0; v < expected.get(i).length; v++) {
                assertThat(actual.get(i)[v]).as("logit %d of step %d", v, i)
                        .isCloseTo(expected.get(i)[v], org.assertj.core.api.Assertions.within(1e-4f));
            }
        }
    }

    static int argmax(float[] v) {
        int best = 0;
        for (int i = 1; i < v.length; i++) {
            best = v[i] > v[best] ? i : best;
        }
        return best;
    }

    PlacementConfig config(PlacementStrategy strategy, TierBudget gpu, TierBudget ram) {
        return PlacementConfig.cpuOnly().withStrategy(strategy).withGpu(PlacementConfig.GpuMode.AUTO, gpu, null).withRam(ram);
    }

    @Test
    void everyTierComputesTheSameLogitsAsTheMappedFile() {
        List<float[]> expected = generate(model(), 6);
        Model model = model();
        try (ExpertPlacement placement = ExpertPlacement.install(model, "tiny",
                config(PlacementStrategy.UNIFORM, new TierBudget.Ratio(0.3), new TierBudget.Ratio(0.3)), device)) {
            PlacementPlan plan = placement.current();
            assertThat(plan.count(Tier.GPU)).isEqualTo(4);
            assertThat(plan.count(Tier.RAM)).isEqualTo(4);
            assertSameLogits(generate(model, 6), expected);

            PlacementSnapshot snap = placement.snapshot();
            assertThat(snap.tiers()).extracting(TierStats::tier).containsExactly("gpu", "ram", "mmap");
            double hitSum = snap.tiers().stream().mapToDouble(TierStats::byteHitRate).sum();
            assertThat(hitSum).isCloseTo(1.0, org.assertj.core.api.Assertions.within(1e-9));
            assertThat(snap.tiers().getFirst().computations()).isPositive();
            assertThat(snap.layers()).hasSize(2);
            assertThat(snap.layers().getFirst().tiers()).hasSize(8);
            long routed = snap.layers().stream().flatMap(l -> l.activations().stream()).mapToLong(Long::longValue).sum();
            assertThat(routed).isEqualTo(2L * 2 * (PROMPT.length + 6)); // 2 layers × top-2 × tokens
        }
        assertThat(device.resident).hasValue(0);
    }

    @Test
    void theModelCountsRoutingOnceWithOrWithoutPlacement() {
        Model model = model();
        generate(model, 2);
        long routedBefore = routed(model.routingStats());
        assertThat(routedBefore).as("counted with no placement installed").isEqualTo(2L * 2 * (PROMPT.length + 2));
        try (ExpertPlacement placement = ExpertPlacement.install(model, "tiny",
                config(PlacementStrategy.UNIFORM, new TierBudget.Ratio(0.3), TierBudget.NONE), device)) {
            assertThat(placement.stats()).isSameAs(model.routingStats());
            generate(model, 2);
            assertThat(routed(model.routingStats()) - routedBefore).as("each routed token counted once")
                    .isEqualTo(2L * 2 * (PROMPT.length + 2));
        }
    }

    private static long routed(RoutingStats stats) {
        long sum = 0;
        for (long[] layer : stats.counts()) {
            for (long c : layer) {
                sum += c;
            }
        }
        return sum;
    }

    @Test
    void allExpertsOnTheDeviceServeEveryByte() {
        Model model = model();
        try (ExpertPlacement placement = ExpertPlacement.install(model, "tiny",
                config(PlacementStrategy.UNIFORM, new TierBudget.Ratio(1), TierBudget.NONE), device)) {
            generate(model, 2);
            assertThat(placement.byteHitRate(Tier.GPU)).isEqualTo(1.0);
            assertThat(placement.byteHitRate(Tier.MMAP)).isZero();
        }
    }

    /**
     * The GPU layer path's device routing: a layer checkout retains every expert of the block without counting,
     * and the choice, counted afterwards, lands in the routing stats and in the tier of the copy that was read.
     */
    @Test
    void aLayerCheckoutRetainsEveryExpertAndCountsOnlyWhatIsRouted() {
        Model model = model();
        try (ExpertPlacement placement = ExpertPlacement.install(model, "tiny",
                config(PlacementStrategy.UNIFORM, new TierBudget.Ratio(1), TierBudget.NONE), device)) {
            long routedBefore = routed(placement.stats());
            ExpertCheckout all = placement.checkoutLayer(1);
            assertThat(all.size()).isEqualTo(8);
            for (int e = 0; e < all.size(); e++) {
                assertThat(all.tier(e)).isEqualTo(Tier.GPU);
            }
            assertThat(routed(placement.stats())).as("nothing counted by the checkout").isEqualTo(routedBefore);
            assertThat(placement.bytesRead(Tier.GPU)).isZero();
            int residentBefore = device.resident.get();
            placement.countRouted(1, new int[] {2, 5}, all);
            assertThat(placement.stats().counts()[1][2]).isEqualTo(1);
            assertThat(placement.stats().counts()[1][5]).isEqualTo(1);
            assertThat(placement.bytesRead(Tier.GPU)).isPositive();
            assertThat(placement.byteHitRate(Tier.GPU)).isEqualTo(1.0);
            all.close();
            assertThat(device.resident.get()).isEqualTo(residentBefore);
        }
        assertThat(device.resident).hasValue(0);
    }

    /**
     * {@link TieredExperts#apply} is {@link TieredExperts#begin}'s pass run in a pool call of its own: the same outputs,
     * bit for bit, with experts on the device, in the RAM tier and mapped in one call.
     */
    @Test
    void theTieredExecutorsApplyComputesItsPassBitForBit() {
        Model model = model();
        ExpertCatalog catalog = new ExpertCatalog(model.expertLayers());
        ExpertSlots slots = new ExpertSlots(catalog.layerCount(), catalog.expertsPerLayer());
        for (int s = 0; s < catalog.layerCount(); s++) {
            for (int e = 0; e < catalog.expertsPerLayer(); e++) {
                ExpertWeights w = catalog.weights(s, e);
                slots.swap(s, e, switch (e % 3) {
                    case 0 -> PlacedExpert.onDevice(device.upload(w));
                    case 1 -> RamTier.REPACKING.load(w);
                    default -> RamTier.mapped(w);
                });
            }
        }
        TieredExperts tiered = new TieredExperts(catalog, slots, device, parallel, new TierCounters());
        int layer = model.expertLayers().getFirst().layer();
        int[] experts = {0, 1, 2, 4, 6};
        Random random = new Random(3);
        float[][][] inputs = new float[experts.length][][];
        for (int j = 0; j < experts.length; j++) {
            inputs[j] = new float[1 + j][catalog.weights(catalog.slotOf(layer), experts[j]).gate().cols()];
            for (float[] x : inputs[j]) {
                for (int i = 0; i < x.length; i++) {
                    x[i] = (float) random.nextGaussian();
                }
            }
        }
        float[][][] applied = tiered.apply(layer, experts, inputs);
        SwiGlu.Pass pass = tiered.begin(layer, experts, inputs);
        parallel.forRange(pass.rows(), pass.grain(), pass::run);
        assertThat(applied).isDeepEqualTo(pass.finish());
    }

    /**
     * The default RAM budget holds the CPU tier: every expert the GPU does not take is copied (the tiny model fits in
     * any host's memory), also after a re-placement moved other experts to the GPU; {@code cpu-experts: mapped} keeps
     * them in the file. What {@code /v1/models} reports follows.
     */
    @Test
    void byDefaultTheCpuTierIsCopiedIntoRamBesideTheGpu() {
        List<float[]> expected = generate(model(), 3);
        Model model = model();
        try (ExpertPlacement placement = ExpertPlacement.install(model, "tiny",
                config(PlacementStrategy.DYNAMIC, new TierBudget.Ratio(0.25), TierBudget.CpuTier.AUTO), device)) {
            assertThat(placement.current().count(Tier.GPU)).isEqualTo(4);
            assertThat(placement.current().count(Tier.RAM)).isEqualTo(12);
            assertThat(placement.cpuExperts()).isEqualTo("ram");
            placement.stats().record(0, 7, 500);
            placement.stats().record(1, 6, 500);
            placement.stats().record(0, 6, 400);
            placement.stats().record(1, 5, 400);
            PlacementPlan moved = placement.rebalance();
            assertThat(moved.tier(0, 7)).isEqualTo(Tier.GPU);
            assertThat(moved.count(Tier.MMAP)).as("nothing left mapped after a re-placement").isZero();
            assertSameLogits(generate(model, 3), expected);
        }
        try (ExpertPlacement placement = ExpertPlacement.install(model(), "tiny",
                config(PlacementStrategy.UNIFORM, new TierBudget.Ratio(0.25),
                        new TierBudget.CpuTier(TierBudget.CpuExperts.MAPPED)), device)) {
            assertThat(placement.current().count(Tier.MMAP)).isEqualTo(12);
            assertThat(placement.cpuExperts()).isEqualTo("mmap");
        }
        try (ExpertPlacement placement = ExpertPlacement.install(model(), "tiny",
                config(PlacementStrategy.UNIFORM, new TierBudget.Ratio(1), TierBudget.CpuTier.AUTO), device)) {
            assertThat(placement.cpuExperts()).isEqualTo("none");
        }
    }

    @Test
    void withoutADeviceTheGpuBudgetIsIgnored() {
        Model model = model();
        try (ExpertPlacement placement = ExpertPlacement.install(model, "tiny",
                config(PlacementStrategy.UNIFORM, new TierBudget.Ratio(1), TierBudget.NONE), null)) {
            assertThat(placement.current().count(Tier.GPU)).isZero();
            assertThat(placement.snapshot().device()).isNull();
        }
    }

    @Test
    void dynamicPlacementFollowsTheLiveCounts() {
        Model model = model();
        try (ExpertPlacement placement = ExpertPlacement.install(model, "tiny",
                config(PlacementStrategy.DYNAMIC, new TierBudget.PerLayer(1), new TierBudget.PerLayer(1)), device)) {
            RoutingStats stats = placement.stats();
            stats.record(0, 5, 50);
            stats.record(0, 2, 20);
            stats.record(1, 7, 40);
            stats.record(1, 1, 30);
            PlacementPlan first = placement.rebalance();
            assertThat(first.tier(0, 5)).isEqualTo(Tier.GPU);
            assertThat(first.tier(1, 7)).isEqualTo(Tier.GPU);
            assertThat(first.tier(0, 2)).isEqualTo(Tier.RAM);
            assertThat(first.tier(1, 1)).isEqualTo(Tier.RAM);

            stats.record(0, 3, 500);
            stats.record(1, 4, 500);
            PlacementPlan second = placement.rebalance();
            assertThat(second.tier(0, 3)).isEqualTo(Tier.GPU);
            assertThat(second.tier(1, 4)).isEqualTo(Tier.GPU);
            assertThat(second.tier(0, 5)).isEqualTo(Tier.RAM); // decayed, still second hottest
            assertThat(second.count(Tier.GPU)).isEqualTo(2);
            assertThat(second.count(Tier.RAM)).isEqualTo(2);
            placement.awaitFrees();
            assertThat(device.resident).hasValue(2); // demoted copies were freed
            assertThat(placement.snapshot().rebalances()).isEqualTo(3);
        }
        assertThat(device.resident).hasValue(0);
    }

    @Test
    void frequencyPlacementStartsFromSavedStatistics() {
        Path stats = dir.resolve("routing.json");
        Model first = model();
        try (ExpertPlacement placement = ExpertPlacement.install(first, "tiny",
                config(PlacementStrategy.FREQUENCY, new TierBudget.PerLayer(1), TierBudget.NONE).withStatsFile(stats),
                device)) {
            placement.stats().record(0, 6, 99);
            placement.stats().record(1, 2, 99);
        } // saved on close
        Model second = model();
        try (ExpertPlacement placement = ExpertPlacement.install(second, "tiny",
                config(PlacementStrategy.FREQUENCY, new TierBudget.PerLayer(1), TierBudget.NONE).withStatsFile(stats),
                device)) {
            assertThat(placement.current().tier(0, 6)).isEqualTo(Tier.GPU);
            assertThat(placement.current().tier(1, 2)).isEqualTo(Tier.GPU);
        }
    }

    @Test
    void swapsWhileGeneratingChangeNoLogit() throws Exception {
        List<float[]> expected = generate(model(), 12);
        Model model = model();
        try (ExpertPlacement placement = ExpertPlacement.install(model, "tiny",
                config(PlacementStrategy.DYNAMIC, new TierBudget.PerLayer(2), new TierBudget.PerLayer(2)), device)) {
            AtomicBoolean stop = new AtomicBoolean();
            AtomicInteger swaps = new AtomicInteger();
            Thread churn = Thread.ofPlatform().start(() -> {
                Random random = new Random(1);
                while (!stop.get()) {
                    // a different hot set every round: nearly every rebalance moves experts between all tiers
                    for (int s = 0; s < 2; s++) {
                        placement.stats().record(s, random.nextInt(8), 1_000 + random.nextInt(1_000));
                        placement.stats().record(s, random.nextInt(8), 1_000 + random.nextInt(1_000));
                    }
                    placement.rebalance();
                    swaps.incrementAndGet();
                }
            });
            try {
                for (int round = 0; round < 5; round++) {
                    assertSameLogits(generate(model, 12), expected);
                }
            } finally {
                stop.set(true);
                churn.join(10_000);
            }
            assertThat(swaps.get()).isGreaterThan(1);
            assertThat(device.uploads.get()).isGreaterThan(4);
        }
        assertThat(device.resident).hasValue(0);
    }

    @Test
    void aFullDeviceLeavesTheRestWhereTheyAreAndKeepsComputing() {
        List<float[]> expected = generate(model(), 4);
        device.capacity = 3;
        Model model = model();
        try (ExpertPlacement placement = ExpertPlacement.install(model, "tiny",
                config(PlacementStrategy.UNIFORM, new TierBudget.Ratio(1), TierBudget.NONE), device)) {
            assertThat(placement.current().count(Tier.GPU)).isEqualTo(3);
            assertThat(placement.current().count(Tier.MMAP)).isEqualTo(13);
            assertThat(device.uploads).hasValue(3);
            assertSameLogits(generate(model, 4), expected);
        }
    }
}
