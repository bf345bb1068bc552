package dev.lazarus.kt.placement;

import dev.lazarus.backend.api.ExpertPlacementView.LayerPlacement;
import dev.lazarus.backend.api.ExpertPlacementView.PlacementSnapshot;
import dev.lazarus.backend.api.ExpertPlacementView.TierStats;
import dev.lazarus.kt.model.ExpertWeights;
import dev.lazarus.kt.model.Model;
import dev.lazarus.kt.model.RoutingStats;
import java.lang.System.Logger.Level;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Expert placement for one loaded model: decides the tier of every routed expert under the tier
 * budgets, prepares each tier's copy, installs the tiered executor on the model, and re-places
 * experts on demand ({@link #rebalance}) or periodically ({@code dynamic}). Re-placing swaps one
 * expert at a time while requests keep running: the new tier's copy is made first, published
 * atomically, and the old copy freed once no forward pass uses it.
 */
public final class ExpertPlacement implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(ExpertPlacement.class.getName());

    private final String modelName;
    private final PlacementConfig config;
    private final ExpertCatalog catalog;
    private final DeviceTier device;
    private final RoutingStats stats;
    private final TierCounters counters = new TierCounters();
    private final RamTier ramTier;
    private final ExpertSlots slots;
    private final long gpuBudget;
    private final long ramBudget;
    private final AtomicLong rebalances = new AtomicLong();
    /** Runs periodic re-placements ({@code dynamic}) and frees replaced copies, off the forward thread. */
    private final ScheduledExecutorService worker;
    private volatile boolean closed;

    private ExpertPlacement(Model model, String modelName, PlacementConfig config, DeviceTier device, RamTier ramTier) {
        this.modelName = modelName;
        this.ramTier = ramTier;
        this.config = config;
        this.catalog = new ExpertCatalog(model.expertLayers());
        this.device = device;
        this.stats = model.routingStats(); // the model's own counter: placement adds none
        RoutingStatsFile.loadInto(config.statsFile(), modelName, catalog, stats);
        this.slots = new ExpertSlots(catalog.layerCount(), catalog.expertsPerLayer());
        this.worker = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().name("kt-placement").daemon().factory());
        this.gpuBudget = device == null ? 0 : config.gpuBudget().resolve(catalog);
        this.ramBudget = config.ramBudget() instanceof TierBudget.CpuTier cpuTier
                ? cpuTierBudget(cpuTier, HostMemory.now()) : config.ramBudget().resolve(catalog, ramTier::bytes);
        for (int s = 0; s < catalog.layerCount(); s++) {
            for (int e = 0; e < catalog.expertsPerLayer(); e++) {
                slots.swap(s, e, RamTier.mapped(catalog.weights(s, e)));
            }
        }
        apply(plan(config.strategy() == PlacementStrategy.DYNAMIC ? stats.takeWindow() : stats.totals()));
        model.useExpertExecutor(new TieredExperts(catalog, slots, device, model.parallel(), counters));
        if (config.strategy() == PlacementStrategy.DYNAMIC) {
            long every = config.rebalanceInterval().toMillis();
            worker.scheduleWithFixedDelay(this::rebalanceQuietly, every, every, TimeUnit.MILLISECONDS);
        }
    }

    /**
     * Places the model's experts per {@code config} and routes its expert computations through the
     * tiers. {@code device} is the GPU tier, or null for CPU-only. Dense models are returned null.
     */
    public static ExpertPlacement install(Model model, String modelName, PlacementConfig config, DeviceTier device) {
        return install(model, modelName, config, device, RamTier.REPACKING);
    }

    /** {@link #install} with the RAM tier's copies made by {@code ramTier} (the bench's plain copies). */
    static ExpertPlacement install(Model model, String modelName, PlacementConfig config, DeviceTier device,
                                   RamTier ramTier) {
        if (model.expertLayers().isEmpty()) {
            return null;
        }
        return new ExpertPlacement(model, modelName, config, device, ramTier);
    }

    public PlacementConfig config() {
        return config;
    }

    public ExpertCatalog catalog() {
        return catalog;
    }

    /** Forgets the routing and tier counts so far (a warm-up's): the admin view and the strategies see traffic only. */
    public void forgetTraffic() {
        stats.forgetLive();
        counters.reset();
    }

    public RoutingStats stats() {
        return stats;
    }

    /** The tier each expert is in now. */
    public PlacementPlan current() {
        Tier[][] t = new Tier[catalog.layerCount()][catalog.expertsPerLayer()];
        for (int s = 0; s < t.length; s++) {
            for (int e = 0; e < t[s].length; e++) {
                t[s][e] = slots.tier(s, e);
            }
        }
        return new PlacementPlan(t);
    }

    /**
     * Re-plans from the statistics (the live window for {@code dynamic}, all counts otherwise),
     * moves the experts whose tier changed, saves the statistics, and returns the new placement.
     */
    public synchronized PlacementPlan rebalance() {
        if (closed) {
            throw new IllegalStateException("expert placement of " + modelName + " is closed");
        }
        double[][] scores = config.strategy() == PlacementStrategy.DYNAMIC ? stats.takeWindow() : stats.totals();
        apply(plan(scores));
        try {
            saveStats();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "cannot save routing statistics: " + e.getMessage());
        }
        return current();
    }

    public void saveStats() {
        if (config.statsFile() != null) {
            RoutingStatsFile.save(config.statsFile(), modelName, catalog, stats);
        }
    }

    public PlacementSnapshot snapshot() {
        PlacementPlan now = current();
        List<TierStats> tiers = new ArrayList<>();
        for (Tier t : Tier.values()) {
            long budget = switch (t) {
                case GPU -> gpuBudget;
                case RAM -> ramBudget;
                case MMAP -> -1;
            };
            tiers.add(new TierStats(t.id(), now.count(t), slots.heldBytes(t), budget, counters.computations(t),
                    counters.byteHitRate(t)));
        }
        long[][] counts = stats.counts();
        List<LayerPlacement> layers = new ArrayList<>();
        for (int s = 0; s < catalog.layerCount(); s++) {
            List<String> ids = new ArrayList<>();
            for (int e = 0; e < catalog.expertsPerLayer(); e++) {
                ids.add(now.tier(s, e).id());
            }
            layers.add(new LayerPlacement(catalog.layerId(s), ids, Arrays.stream(counts[s]).boxed().toList()));
        }
        return new PlacementSnapshot(config.strategy().id(), device == null ? null : device.describe(), Instant.now(),
                rebalances.get(), tiers, layers);
    }

    /**
     * The current copies of {@code experts} of block {@code layer} for one token, retained until the checkout
     * is closed (what the GPU layer path computes with). It bypasses the model's MoE block, so the routing is
     * counted here, in the model's own counter.
     */
    public ExpertCheckout checkout(int layer, int[] experts) {
        int slot = catalog.slotOf(layer);
        for (int e : experts) {
            stats.record(slot, e, 1);
        }
        return new ExpertCheckout(slots, slot, experts, counters);
    }

    /**
     * Every expert of block {@code layer} (checkout index = expert index), retained until the checkout is closed,
     * nothing counted: for the GPU layer path when it routes on the device and learns the choice only once the
     * token is done; it then reports the choice with {@link #countRouted}.
     */
    public ExpertCheckout checkoutLayer(int layer) {
        int[] all = new int[catalog.expertsPerLayer()];
        for (int e = 0; e < all.length; e++) {
            all[e] = e;
        }
        return new ExpertCheckout(slots, catalog.slotOf(layer), all, null);
    }

    /** Counts block {@code layer}'s routing to {@code experts} and their bytes, as {@link #checkout} does. */
    public void countRouted(int layer, int[] experts, ExpertCheckout layerCheckout) {
        int slot = catalog.slotOf(layer);
        for (int e : experts) {
            stats.record(slot, e, 1);
            layerCheckout.count(e, counters);
        }
    }

    /**
     * The memory the experts in {@code tier} take there now: for RAM the copies as allocated (a repacked Q4_K copy
     * is 5.6 % larger than the file's blocks), what its budget is counted in; for the others their stored bytes.
     */
    public long heldBytes(Tier tier) {
        return slots.heldBytes(tier);
    }

    /** The default RAM budget: the CPU tier's copies where they fit (logged: where they go and why). */
    private long cpuTierBudget(TierBudget.CpuTier cpuTier, HostMemory memory) {
        long gpuBytes = 0;
        if (device != null) {
            long supported = 0;
            for (int s = 0; s < catalog.layerCount(); s++) {
                for (int e = 0; e < catalog.expertsPerLayer(); e++) {
                    supported += device.supports(catalog.weights(s, e)) ? catalog.expertBytes(s, e) : 0;
                }
            }
            gpuBytes = Math.min(gpuBudget, supported);
        }
        CpuTierBudget b = CpuTierBudget.decide(cpuTier.mode(), catalog, ramTier::bytes, gpuBytes, device != null, memory);
        LOG.log(Level.INFO, "CPU-tier experts of {0}: {1}", modelName, b.why());
        return b.bytes();
    }

    /**
     * Where the experts the GPU does not hold live now, for {@code /v1/models}: {@code ram} (all copied into the RAM
     * tier), {@code mmap} (all read in place from the mapped file), {@code ram+mmap}, or {@code none} (all on the GPU).
     */
    public String cpuExperts() {
        PlacementPlan now = current();
        int ram = now.count(Tier.RAM), mapped = now.count(Tier.MMAP);
        return ram > 0 && mapped > 0 ? "ram+mmap" : ram > 0 ? "ram" : mapped > 0 ? "mmap" : "none";
    }

    /** The RAM tier's budget in bytes, counted as {@link #heldBytes}. */
    long ramBudget() {
        return ramBudget;
    }

    /** Expert weight bytes (as stored in the file) read from {@code tier} since start. */
    public long bytesRead(Tier tier) {
        return counters.bytes(tier);
    }

    /** The share of expert weight bytes served by {@code tier} since start. */
    public double byteHitRate(Tier tier) {
        return counters.byteHitRate(tier);
    }

    private PlacementPlan plan(double[][] scores) {
        return PlacementPlanner.plan(config.strategy(), catalog, gpuBudget, ramBudget, ramTier::bytes, scores,
                w -> device != null && device.supports(w));
    }

    /**
     * Moves every expert whose tier differs, demotions first so a tier's memory is released before
     * another expert is promoted into it (peak use stays near the budget).
     */
    private synchronized void apply(PlacementPlan target) {
        int moved = 0;
        for (Tier into : List.of(Tier.MMAP, Tier.RAM, Tier.GPU)) {
            // after the first failure (device or RAM full) the rest of that tier's moves are skipped, not each retried
            boolean failed = false;
            for (int s = 0; s < catalog.layerCount() && !failed; s++) {
                for (int e = 0; e < catalog.expertsPerLayer() && !failed; e++) {
                    if (target.tier(s, e) == into && slots.tier(s, e) != into) {
                        PlacedExpert next = prepare(into, catalog.weights(s, e));
                        if (next != null) {
                            slots.swap(s, e, next);
                            moved++;
                        } else {
                            failed = true;
                        }
                    }
                }
            }
        }
        rebalances.incrementAndGet();
        PlacementPlan now = current();
        LOG.log(moved > 0 || rebalances.get() == 1 ? Level.INFO : Level.DEBUG, "expert placement ({0}) of {1}: {2} moved; gpu {3} experts / {4} MiB, ram {5} / {6} MiB, mmap {7}",
                config.strategy().id(), modelName, moved, now.count(Tier.GPU), slots.heldBytes(Tier.GPU) >> 20,
                now.count(Tier.RAM), slots.heldBytes(Tier.RAM) >> 20, now.count(Tier.MMAP));
    }

    /** The expert's copy in {@code tier}, or null when it cannot be made (logged; the expert stays where it is). */
    private PlacedExpert prepare(Tier tier, ExpertWeights w) {
        try {
            PlacedExpert placed = switch (tier) {
                case GPU -> PlacedExpert.onDevice(device.upload(w));
                case RAM -> ramTier.load(w);
                case MMAP -> RamTier.mapped(w);
            };
            return placed.freedOn(worker);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "cannot place more experts in " + tier.id() + " (" + e.getMessage()
                    + "); the remaining ones stay where they are until the next rebalance");
            return null;
        }
    }

    /** Waits until the frees queued so far have run (the worker runs tasks in order). */
    void awaitFrees() {
        try {
            worker.submit(() -> { }).get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("frees did not complete", e);
        }
    }

    private void rebalanceQuietly() {
        try {
            if (!closed) {
                rebalance();
            }
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "periodic expert re-placement failed", e);
        }
    }

    /**
     * Stops re-placing, saves the statistics and frees the tier copies. The model must no longer run
     * (its executor would find the placement closed).
     */
    @Override
    public void close() {
        synchronized (this) { // waits for a re-placement in progress; none starts after this
            if (closed) {
                return;
            }
            closed = true;
        }
        try {
            saveStats();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "cannot save routing statistics", e);
        }
        slots.clear(); // queues the frees on the worker
        worker.shutdown(); // no more periodic runs; queued frees still run
        try {
            if (!worker.awaitTermination(30, TimeUnit.SECONDS)) {
                LOG.log(Level.WARNING, "expert placement of {0}: tier copies still being freed after 30 s", modelName);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
