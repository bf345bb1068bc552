package dev.lazarus.kt.gpu;

import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.model.ForwardBatch;
import dev.lazarus.kt.model.KvCache;
import dev.lazarus.kt.model.Model;
import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.placement.DeviceTier;
import dev.lazarus.kt.placement.ExpertPlacement;
import dev.lazarus.kt.placement.PlacementConfig;
import dev.lazarus.kt.placement.PlacementConfig.GpuMode;
import dev.lazarus.kt.placement.PlacementStrategy;
import dev.lazarus.kt.placement.TierBudget;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;

/**
 * Prompt (prefill) throughput of one GPU layer path placement, what llama-bench's {@code -p N -n 0} measures: a
 * prompt of N random tokens as one forward pass into a fresh cache, logits of the last token only, tok/s = N / time,
 * median of {@code --repeat} after one untimed pass per length. Uses only the engine's public API, so the same class
 * measures an older engine build (scripts/device/gpu-prefill.sh's baseline class path) beside the current one.
 * <pre>GpuPrefillBenchmark model.gguf --kernels kernels.ptx --config layers-uniform:0 [--prompts 128,512]
 *     [--repeat 3] [--threads N]</pre>
 * {@code --config} is GpuDecodeBenchmark's {@code layers-strategy:gpuShare} (layers on the GPU; a dynamic placement
 * is rebalanced after a 64-token warm-up decode, as there). Prints {@code config pN tok/s} per prompt length.
 */
public final class GpuPrefillBenchmark {

    private GpuPrefillBenchmark() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: GpuPrefillBenchmark <model.gguf> --kernels kernels.ptx --config layers-uniform:0"
                    + " [--prompts 128,512] [--repeat 3] [--threads N]");
            System.exit(2);
        }
        Map<String, String> opt = new HashMap<>();
        for (int i = 1; i + 1 < args.length; i += 2) {
            opt.put(args[i].replaceFirst("^--", ""), args[i + 1]);
        }
        String config = opt.getOrDefault("config", "layers-uniform:0");
        String[] parts = config.replaceFirst("^layers-", "").split(":");
        PlacementStrategy strategy = PlacementStrategy.of(parts[0]);
        double share = Double.parseDouble(parts[1]);
        int[] prompts = Arrays.stream(opt.getOrDefault("prompts", "128,512").split(",")).mapToInt(Integer::parseInt)
                .toArray();
        int repeat = Integer.parseInt(opt.getOrDefault("repeat", "3"));
        int threads = Integer.parseInt(opt.getOrDefault("threads", "" + Runtime.getRuntime().availableProcessors()));
        PlacementConfig c = PlacementConfig.cpuOnly().withStrategy(strategy)
                .withGpu(GpuMode.ON, new TierBudget.Ratio(share), Path.of(opt.get("kernels"))).withGpuLayers(true);
        Random random = new Random(42);
        try (GgufFile file = GgufFile.open(Path.of(args[0])); Parallel parallel = Parallel.ofThreads(threads);
             DeviceTier gpu = GpuTiers.open(c).orElseThrow()) {
            Model m = Model.load(file, parallel);
            try (ExpertPlacement placement = ExpertPlacement.install(m, "bench", c, gpu);
                 AutoCloseable layers = GpuTiers.installLayers(m, file, placement, gpu, 1).orElseThrow(
                         () -> new IllegalStateException(config + ": the GPU layer path did not install"))) {
                if (strategy == PlacementStrategy.DYNAMIC) {
                    GreedyDecoder.run(m, random.ints(16, 0, m.vocabSize()).toArray(), 64, null);
                    placement.rebalance();
                }
                for (int n : prompts) {
                    prefill(m, random.ints(n, 0, m.vocabSize()).toArray()); // warm-up: JIT, device buffers
                    double[] runs = new double[repeat];
                    for (int r = 0; r < repeat; r++) {
                        int[] prompt = random.ints(n, 0, m.vocabSize()).toArray();
                        long start = System.nanoTime();
                        prefill(m, prompt);
                        runs[r] = n / ((System.nanoTime() - start) / 1e9);
                    }
                    Arrays.sort(runs);
                    System.out.printf("%-22s p%-5d %9.1f%n", config, n, runs[repeat / 2]);
                }
            }
        }
    }

    /** The prompt as one forward pass into a fresh cache, the last token's logits wanted. */
    private static void prefill(Model m, int[] prompt) {
        int n = prompt.length;
        KvCache cache = m.newCache(n + 1);
        cache.ensureCapacity(n);
        KvCache[] caches = new KvCache[n];
        Arrays.fill(caches, cache);
        boolean[] want = new boolean[n];
        want[n - 1] = true;
        int[] positions = new int[n];
        Arrays.setAll(positions, i -> i);
        m.forward(new ForwardBatch(prompt, positions, caches, want));
    }
}
