package dev.lazarus.kt.gpu;

import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.model.Model;
import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.placement.DeviceTier;
import dev.lazarus.kt.placement.ExpertPlacement;
import dev.lazarus.kt.placement.PlacementConfig.GpuMode;
import dev.lazarus.kt.placement.PlacementConfig;
import dev.lazarus.kt.placement.PlacementStrategy;
import dev.lazarus.kt.placement.Tier;
import dev.lazarus.kt.placement.TierBudget;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Decode speed under expert placements, for docs/benchmarks.md#gpu-decode: one sequence decoded greedily, all
 * experts on the CPU against a share of the expert bytes on the GPU, uniform against dynamic
 * placement. The JVM is warmed up first on the CPU path (the JIT compiles the kernels before any
 * timing). Each configuration then decodes a warm-up prompt (the routing counts dynamic placement
 * learns from, after which it re-places once as its timer would) and times a different prompt
 * {@code --repeat} times (median reported). Prints tokens per second (one token per forward pass,
 * prompt included) and the share of expert bytes the GPU served while timed.
 *
 * <pre>GpuDecodeBenchmark model.gguf [--kernels experts.ptx] [--gpu auto|on|off] [--threads N]
 *     [--tokens 64] [--warmup 64] [--repeat 3] [--configs cpu,dynamic:0.1,layers-dynamic:0.1,...]</pre>
 * A configuration is {@code cpu} (no GPU) or {@code [layers-]strategy:gpuShare[:ramShare]}; without a RAM share
 * the CPU's experts are where a user's configuration puts them by default ({@code cpu-experts: auto}: copied into
 * the RAM tier where they fit, {@link dev.lazarus.kt.placement.TierBudget.CpuTier}); {@code uniform:0:0} keeps every
 * expert memory-mapped and {@code uniform:0:1} puts every expert in the RAM tier; the
 * {@code layers-} prefix runs the GPU layer path ({@link GpuLayerPath}; {@code layers-uniform:0}: layers on
 * the GPU, every expert on the CPU). A {@code +blocking} suffix opens the GPU with blocking sync (a thread
 * waiting for it sleeps instead of spinning); it applies to the whole JVM, so give such a configuration its own.
 * Configurations run in one JVM share its JIT profile, and the first one shapes the compiled kernels
 * (mapped and RAM segments are different classes to them); scripts/device/gpu-check.sh therefore runs
 * each configuration in a fresh JVM, passing {@code --baseline} (the cpu tok/s) and {@code --header false}.
 */
public final class GpuDecodeBenchmark {

    private GpuDecodeBenchmark() {}

    /**
     * {@code cpu}, or {@code [layers-]strategy:gpuShare[:ramShare]} ({@code uniform:0:1}: every expert in the
     * RAM tier; the {@code layers-} prefix adds the GPU layer path: attention, norms, router on the GPU too).
     */
    record Setup(String name, boolean layers, PlacementStrategy strategy, double gpuShare, TierBudget ram,
                 boolean blockingSync) {
        static Setup parse(String name) {
            boolean blocking = name.endsWith("+blocking");
            String s = blocking ? name.substring(0, name.length() - "+blocking".length()) : name;
            if (s.equals("cpu")) {
                return new Setup(name, false, PlacementStrategy.UNIFORM, 0, TierBudget.CpuTier.AUTO, blocking);
            }
            boolean layers = s.startsWith("layers-");
            String[] parts = s.substring(layers ? "layers-".length() : 0).split(":");
            return new Setup(name, layers, PlacementStrategy.of(parts[0]), Double.parseDouble(parts[1]),
                    parts.length > 2 ? new TierBudget.Ratio(Double.parseDouble(parts[2])) : TierBudget.CpuTier.AUTO,
                    blocking);
        }

        boolean usesGpu() {
            return layers || gpuShare > 0;
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: GpuDecodeBenchmark <model.gguf> [--kernels experts.ptx] [--gpu auto|on|off]"
                    + " [--threads N] [--tokens 64] [--warmup 64] [--repeat 3] [--configs cpu,uniform:0.1,dynamic:0.1,...]");
            System.exit(2);
        }
        Map<String, String> opt = new HashMap<>();
        for (int i = 1; i + 1 < args.length; i += 2) {
            opt.put(args[i].replaceFirst("^--", ""), args[i + 1]);
        }
        Path model = Path.of(args[0]);
        int threads = Integer.parseInt(opt.getOrDefault("threads", "" + Runtime.getRuntime().availableProcessors()));
        int tokens = Integer.parseInt(opt.getOrDefault("tokens", "64"));
        int warmup = Integer.parseInt(opt.getOrDefault("warmup", "64"));
        int repeat = Integer.parseInt(opt.getOrDefault("repeat", "3"));
        boolean header = Boolean.parseBoolean(opt.getOrDefault("header", "true"));
        List<Setup> setups = Arrays.stream(opt.getOrDefault("configs", "cpu,uniform:0.1,dynamic:0.1,layers-uniform:0,"
                        + "layers-uniform:0.1,layers-dynamic:0.1,layers-uniform:0.3,layers-dynamic:0.3")
                .split(",")).map(String::trim).map(Setup::parse).toList();
        String kernels = opt.get("kernels");
        PlacementConfig base = PlacementConfig.cpuOnly().withGpu(
                GpuMode.valueOf(opt.getOrDefault("gpu", "auto").toUpperCase(java.util.Locale.ROOT)),
                new TierBudget.Ratio(1), kernels == null ? null : Path.of(kernels));

        if (setups.stream().anyMatch(Setup::blockingSync)) {
            System.setProperty(CudaExpertTier.BLOCKING_SYNC_PROPERTY, "true");
        }
        Random random = new Random(42);
        try (GgufFile file = GgufFile.open(model); Parallel parallel = Parallel.ofThreads(threads)) {
            DeviceTier gpu = GpuTiers.open(base).orElse(null);
            int vocab = Model.load(file, parallel).vocabSize();
            int[] warmPrompt = random.ints(16, 0, vocab).toArray();
            int[] timedPrompt = random.ints(16, 0, vocab).toArray();
            if (header) {
                System.out.printf("model %s, %d threads, %d decode tokens timed after %d warm-up, GPU: %s%n", model.getFileName(),
                    threads, tokens, warmup, gpu == null ? "none" : gpu.describe());
                System.out.printf("%-28s %10s %12s %9s %10s %16s %12s %12s%n", "config", "gpu share", "gpu experts", "tok/s",
                        "vs cpu", "gpu byte hits", "top-10% use", "cpu experts");
            }
            GreedyDecoder.run(Model.load(file, parallel), warmPrompt, Math.max(warmup, 32), null); // JIT warm-up
            double baseline = Double.parseDouble(opt.getOrDefault("baseline", "0"));
            try {
                for (Setup s : setups) {
                    PlacementConfig c = base.withStrategy(s.strategy())
                            .withGpu(s.usesGpu() ? base.gpu() : GpuMode.OFF, new TierBudget.Ratio(s.gpuShare()),
                                    base.gpuKernels())
                            .withRam(s.ram())
                            .withGpuLayers(s.layers());
                    Model m = Model.load(file, parallel);
                    try (ExpertPlacement placement = ExpertPlacement.install(m, "bench", c, s.usesGpu() ? gpu : null);
                         AutoCloseable layers = s.layers()
                                 ? GpuTiers.installLayers(m, file, placement, gpu, 1).orElseThrow(
                                         () -> new IllegalStateException(s.name() + ": the GPU layer path did not install"))
                                 : () -> { }) {
                        GreedyDecoder.run(m, warmPrompt, warmup, null);
                        if (s.strategy() == PlacementStrategy.DYNAMIC) {
                            placement.rebalance();
                        }
                        long gpuBefore = placement.bytesRead(Tier.GPU);
                        long allBefore = allBytes(placement);
                        HybridProfile.reset();
                        dev.lazarus.kt.parallel.PhaseProfile.reset();
                        double[] runs = new double[repeat];
                        for (int r = 0; r < repeat; r++) {
                            long start = System.nanoTime();
                            GreedyDecoder.run(m, timedPrompt, tokens, null);
                            runs[r] = (timedPrompt.length + tokens) / ((System.nanoTime() - start) / 1e9);
                        }
                        Arrays.sort(runs);
                        double tps = runs[repeat / 2];
                        baseline = baseline == 0 ? tps : baseline;
                        double hits = (double) (placement.bytesRead(Tier.GPU) - gpuBefore) / (allBytes(placement) - allBefore);
                        System.out.printf("%-28s %9.0f%% %12d %9.2f %9.2fx %15.1f%% %11.1f%% %12s%n", s.name(),
                                s.gpuShare() * 100, placement.current().count(Tier.GPU), tps, tps / baseline, hits * 100,
                                hottestShare(placement.stats().counts(), 0.1) * 100, placement.cpuExperts());
                        if (HybridProfile.ON) {
                            System.out.println("-- " + HybridProfile.report());
                        }
                        if (dev.lazarus.kt.parallel.PhaseProfile.ON) {
                            System.out.print(dev.lazarus.kt.parallel.PhaseProfile.report("-- " + s.name()
                                    + ": pool calls of the timed tokens"));
                        }
                    }
                }
            } finally {
                if (gpu != null) {
                    gpu.close();
                }
            }
        }
    }

    /**
     * The share of routed tokens that went to the most used {@code fraction} of experts: how skewed the
     * routing is (0.1 means uniform at 10 %), which bounds what frequency-based placement can gain.
     */
    static double hottestShare(long[][] counts, double fraction) {
        long[] all = Arrays.stream(counts).flatMapToLong(Arrays::stream).sorted().toArray();
        long total = Arrays.stream(all).sum();
        int top = Math.max(1, (int) Math.round(all.length * fraction));
        long hot = 0;
        for (int i = all.length - top; i < all.length; i++) {
            hot += all[i];
        }
        return total == 0 ? 0 : (double) hot / total;
    }

    private static long allBytes(ExpertPlacement p) {
        long sum = 0;
        for (Tier t : Tier.values()) {
            sum += p.bytesRead(t);
        }
        return sum;
    }
}
