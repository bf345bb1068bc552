package dev.lazarus.kt.gpu;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.model.AttentionOrder;
import dev.lazarus.kt.model.Model;
import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.placement.DeviceTier;
import dev.lazarus.kt.placement.ExpertPlacement;
import dev.lazarus.kt.placement.PlacementConfig.GpuMode;
import dev.lazarus.kt.placement.PlacementConfig;
import dev.lazarus.kt.placement.Tier;
import dev.lazarus.kt.placement.TierBudget;
import dev.lazarus.kt.sampling.Sampler;
import dev.lazarus.kt.synthetic.SyntheticModels;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The GPU tier against the CPU path on the same model: decodes greedily on the CPU, then replays the
 * same tokens with a share of the experts on the GPU (and optionally the GPU layer path) and compares every
 * position's logits. Run by
 * the {@code gpu} test and by {@code scripts/device/gpu-check.sh} on the device machine:
 * {@code GpuParityCheck <kernels.ptx> [model.gguf]} (default: tinyQwen3Moe in Q8_0), exit 1 on a mismatch.
 */
public final class GpuParityCheck {

    /**
     * The CPU path's attention order, for the reference and the CPU-side attention of the experts-only runs: llama-server
     * {@code -fa off} by default, {@code -Dlazarus.kt.gpu-check.attention=flash} for its default {@code -fa on} (one
     * thread). The GPU layer path computes attention in F32 as the non-flash order does, so it is held to that order
     * in both runs; with the flash reference its distance to the flash order is measured beside the CPU's own distance
     * between the two orders (see {@link #LAYER_TOLERANCE}).
     */
    private static final AttentionOrder ORDER = "flash".equals(System.getProperty("lazarus.kt.gpu-check.attention"))
            ? AttentionOrder.flash(1) : AttentionOrder.NON_FLASH;

    /**
     * Largest |logit difference| of an experts-only run where no activation rounds the other way. Both paths
     * quantize activations to Q8_0 the same way and sum exact integer block products, so what differs is float
     * summation order and {@code expf} against {@code Math.exp}: around 1e-4 on logits of magnitude ~1-5, far below
     * what a wrong kernel gives (order 1). The fake driver's runs (FakeCudaDriverTest) are held to it.
     */
    public static final float TOLERANCE = 2e-2f;

    /**
     * Largest |logit difference| the device check accepts from an experts-only run: {@link #TOLERANCE} plus the odd
     * hidden value whose Q8_0 rounding lands on the other side, which the cache carries on. That step is large on
     * the chaotic tiny deepseek2 (whose two CPU attention orders differ by up to 5 logits): measured on an H100 with
     * the flash-order reference, its decompressed-MLA form is exact for 22 positions, then 9.0e-2 at position 22 and
     * at most 1.05e-1 after it, with the same greedy tokens. A wrong kernel gives differences of order 1 from the
     * first position.
     */
    public static final float EXPERTS_TOLERANCE = 0.15f;

    /**
     * Largest |logit difference| accepted from the GPU layer path, where every block's attention, norms and
     * router run on the GPU too: float reductions in another order (trees of warps against the CPU's
     * ggml-ordered sums) leave a value an ulp off now and then, and when that value is next quantized to Q8_0
     * it may land on the other side of a rounding step, which the following layers and positions carry on.
     * Measured on an H100 (7 prompt + 48 greedy tokens, Q8_0): tinyQwen3Moe 8.8e-2, tinyLlama (dense) 1.0e-1,
     * tinyDeepseek2 2.2e-1, the last exact to 1.5e-6 for 28 positions (one isolated 9.9e-2 at position 10)
     * until a flip that the KV cache carries on, with logits of magnitude ~10. A wrong kernel gives
     * differences of order 1 from the first position and other tokens. This is the distance to the non-flash CPU order,
     * whose F32 scores and values the GPU's attention computes; to the flash order (F16 query, F16 value accumulation)
     * the GPU layer path is as far as the two CPU orders are from each other, measured on an H100 (7 prompt + 48
     * greedy tokens, Q8_0): tinyQwen3Moe 0.145 (the CPU orders: 0.145), tinyLlama 0.149 (0.157), tinyDeepseek2 5.05
     * with 2 greedy tokens changed (5.19, 3 changed), its decompressed-MLA form 0.27 (4.73).
     */
    public static final float LAYER_TOLERANCE = 0.25f;

    /**
     * Largest |logit difference| at a position expected where the model's matrices are K-quants (Q4_K, Q5_K,
     * Q6_K): the GPU meets them with the Q8_0 activation of every other type (32-value blocks, as llama.cpp's CUDA
     * path meets them with its Q8_1), the CPU path with Q8_K (256-value blocks, ggml's CPU choice), so every
     * product differs by the two activations' rounding, not only by summation order. Measured on an H100
     * (tinyQwen3Moe, 7 prompt + 48 greedy tokens): experts only 0.20-0.29, layer path 0.23-0.39, except at one
     * position of 55 in three of the nine layer-path runs (1.33 and 1.38: Q5_K with 30 % and 100 % of its
     * experts on the GPU; 3.68: Q6_K with its experts on the CPU), where a near tie of the router or the greedy
     * token (CPU margins up to 0.737) went the other way. Q4_0 and Q8_0, met with Q8_0 on both paths, keep
     * {@link #EXPERTS_TOLERANCE} and {@link #LAYER_TOLERANCE}.
     */
    public static final float K_QUANT_TOLERANCE = 0.5f;

    /**
     * Share of the positions that may exceed {@link #K_QUANT_TOLERANCE} (measured: at most 1 of 55, see there). A
     * wrong type or pointer handed to the kernels gives differences of the logits' own size at every position;
     * the kernels' arithmetic is held to 1e-5 by DeviceQuantMatvecTest (each block type against its decoded product).
     */
    public static final double K_QUANT_OUTLIER_SHARE = 0.1;

    /**
     * A greedy token that differs where the CPU's own logits of the two tokens are at most this far apart is a
     * near tie, which the float differences above may flip (seen on the dense tinyLlama: CPU margin 0.023,
     * logit differences up to 0.08); it is counted apart and not failed. A kernel bug changes tokens with
     * clear margins.
     */
    public static final float NEAR_TIE = 0.05f;

    /**
     * {@link #NEAR_TIE} for K-quant models, whose logits differ by up to {@link #K_QUANT_TOLERANCE} (the two
     * activations' rounding, see there): a greedy token that differs where the CPU's margin is below it is a near
     * tie. Measured on an H100: differing tokens at CPU margins up to 0.104 (Q5_K, experts on the CPU), 0.699
     * (Q6_K, experts on the CPU) and 0.737 (Q5_K with GPU experts), each at a position of the outliers above.
     */
    public static final float K_QUANT_NEAR_TIE = 1.0f;

    static final int[] PROMPT = {1, 15, 27, 99, 4, 300, 8};
    /** Prompt length of the batched prompt checks: several tiles of PrefillKernels.TILE tokens, the last one partial. */
    static final int PREFILL_PROMPT = 45;

    /**
     * @param layers          whether the GPU layer path ran (attention, norms, router on the GPU too)
     * @param gpuShare        the fraction of expert bytes placed on the GPU
     * @param tokenMismatches positions whose greedy token differs with a clear CPU margin (a failure)
     * @param nearTies        positions whose greedy token differs where the CPU's margin is within {@link #NEAR_TIE}
     *                        ({@link #K_QUANT_NEAR_TIE} for K-quants)
     * @param widestFlip      the largest CPU margin of a greedy token that differs (0: none differs)
     * @param kQuants         whether the model has K-quant matrices (the wider tolerances)
     * @param outliers        positions whose largest |logit difference| exceeds {@link #tolerance()}
     */
    public record Result(boolean layers, double gpuShare, int gpuExperts, int experts, double gpuByteHitRate,
                         float maxAbsDiff, int positions, int tokenMismatches, int nearTies, float widestFlip,
                         boolean kQuants, int outliers, String prompt, float tokenPathDiff, float[] flashGap) {
        Result(boolean layers, double gpuShare, int gpuExperts, int experts, double gpuByteHitRate, float maxAbsDiff,
               int positions, int tokenMismatches, int nearTies, float widestFlip, boolean kQuants, int outliers) {
            this(layers, gpuShare, gpuExperts, experts, gpuByteHitRate, maxAbsDiff, positions, tokenMismatches, nearTies,
                    widestFlip, kQuants, outliers, null, 0, null);
        }

        /** This result with the distances to the flash order ({@link #flashGap}: the GPU's, the non-flash CPU order's). */
        Result withFlashGap(float[] gap) {
            return new Result(layers, gpuShare, gpuExperts, experts, gpuByteHitRate, maxAbsDiff, positions,
                    tokenMismatches, nearTies, widestFlip, kQuants, outliers, prompt, tokenPathDiff, gap);
        }

        public float tolerance() {
            return kQuants ? K_QUANT_TOLERANCE : layers ? LAYER_TOLERANCE : EXPERTS_TOLERANCE;
        }

        public boolean ok() {
            if (kQuants) {
                return outliers <= K_QUANT_OUTLIER_SHARE * positions && tokenMismatches == 0;
            }
            return maxAbsDiff <= tolerance() && tokenMismatches == 0 && tokenPathDiff <= tolerance();
        }

        @Override
        public String toString() {
            return "%s, GPU share %.0f %% (%d/%d experts, %.1f %% of expert bytes read on GPU): max |Δlogit| %.2e (tolerance %.2g, %d positions beyond) over %d positions, %d argmax differences (+%d near ties, widest CPU margin %.3f)%s -> %s"
                    .formatted(layers ? "GPU layers + experts" : "GPU experts only", gpuShare * 100, gpuExperts,
                            experts, gpuByteHitRate * 100, maxAbsDiff, tolerance(), outliers, positions, tokenMismatches, nearTies,
                            widestFlip, (prompt == null ? "" : "; prompt " + prompt
                                    + ", max |Δlogit| to the GPU's token-by-token prompt %.2e".formatted(tokenPathDiff))
                                    + (flashGap == null ? "" : "; to the flash order %.2e (the CPU's non-flash order: %.2e)"
                                            .formatted(flashGap[0], flashGap[1])),
                            ok() ? "OK" : "MISMATCH");
        }
    }

    /** What a comparison of two runs' logits found (see {@link Result}). */
    private record Diff(float maxAbsDiff, int mismatches, int nearTies, float widestFlip, int outliers) {}

    private GpuParityCheck() {}

    /** The check on {@code model} with {@code gpuShare} of its expert bytes on the GPU (which must open). */
    public static Result run(Path model, Path kernels, double gpuShare, int steps) {
        return run(model, kernels, gpuShare, steps, false);
    }

    /**
     * The check on {@code model} with {@code gpuShare} of its expert bytes on the GPU (which must open) and,
     * with {@code layers}, the GPU layer path: the GPU replays the CPU's greedy tokens and every position's
     * logits are compared.
     */
    public static Result run(Path model, Path kernels, double gpuShare, int steps, boolean layers) {
        try (GgufFile file = GgufFile.open(model); Parallel parallel = Parallel.ofThreads(
                Math.max(1, Runtime.getRuntime().availableProcessors() / 2))) {
            List<float[]> reference = GreedyDecoder.run(Model.load(file, parallel, ORDER), PROMPT, steps, null);
            int[] tokens = GreedyDecoder.tokens(reference, PROMPT.length);
            List<float[]> expected = layers ? layerReference(file, parallel, reference, PROMPT, steps, tokens) : reference;
            Model onGpu = Model.load(file, parallel, ORDER);
            PlacementConfig config = PlacementConfig.cpuOnly()
                    .withGpu(GpuMode.ON, new TierBudget.Ratio(gpuShare), kernels).withGpuLayers(layers);
            // a dense model has no placement (null, which try-with-resources skips)
            try (DeviceTier gpu = GpuTiers.open(config).orElseThrow();
                 ExpertPlacement placement = ExpertPlacement.install(onGpu, "parity", config, gpu)) {
                if (layers && GpuTiers.installLayers(onGpu, file, config, placement, gpu, 1).isEmpty()) {
                    throw new IllegalStateException("the GPU layer path did not install (see the log)");
                }
                List<float[]> actual = GreedyDecoder.run(onGpu, PROMPT, steps, tokens);
                boolean kQuants = kQuants(file);
                Diff d = compare(expected, actual, kQuants ? K_QUANT_TOLERANCE : layers ? LAYER_TOLERANCE : EXPERTS_TOLERANCE,
                        kQuants ? K_QUANT_NEAR_TIE : NEAR_TIE);
                return result(layers, gpuShare, placement, d, expected.size(), kQuants, null, 0)
                        .withFlashGap(flashGap(reference, expected, actual));
            }
        }
    }

    /**
     * The GPU layer path's batched prompt ({@link GpuPrefill}) against the CPU path: a prompt of
     * {@code promptLength} tokens as two forward passes (chunks), then {@code steps} greedy tokens, each position's logits
     * compared with the CPU's and with the same GPU placement fed the prompt token by token (the decode path).
     * {@code staged}: the CPU-tier experts are uploaded to the GPU for the prompt (the staging threshold set to 1),
     * otherwise the CPU computes them (threshold beyond the prompt).
     */
    public static Result runPrefill(Path model, Path kernels, double gpuShare, int promptLength, int steps,
                                    boolean staged) {
        try (GgufFile file = GgufFile.open(model); Parallel parallel = Parallel.ofThreads(
                Math.max(1, Runtime.getRuntime().availableProcessors() / 2))) {
            Model onCpu = Model.load(file, parallel, ORDER);
            int[] prompt = new java.util.Random(7).ints(promptLength, 1, Math.min(onCpu.vocabSize(), 1000)).toArray();
            List<float[]> reference = GreedyDecoder.run(onCpu, prompt, steps, null);
            int[] tokens = GreedyDecoder.tokens(reference, prompt.length);
            List<float[]> expected = layerReference(file, parallel, reference, prompt, steps, tokens);
            Model onGpu = Model.load(file, parallel, ORDER);
            PlacementConfig config = PlacementConfig.cpuOnly()
                    .withGpu(GpuMode.ON, new TierBudget.Ratio(gpuShare), kernels).withGpuLayers(true);
            String before = System.getProperty(GpuPrefill.STAGE_PROPERTY);
            System.setProperty(GpuPrefill.STAGE_PROPERTY, staged ? "1" : "" + (promptLength + 1));
            try (DeviceTier gpu = GpuTiers.open(config).orElseThrow();
                 ExpertPlacement placement = ExpertPlacement.install(onGpu, "parity", config, gpu)) {
                GpuLayerPath path = GpuTiers.installLayers(onGpu, file, config, placement, gpu, 1).orElseThrow(
                        () -> new IllegalStateException("the GPU layer path did not install (see the log)"));
                List<float[]> tokenPath = GreedyDecoder.run(onGpu, prompt, steps, tokens);
                // two chunks: the second starts past a prefix the device cache holds already
                List<float[]> batched = GreedyDecoder.run(onGpu, prompt, steps, tokens, promptLength / 2 + 1);
                boolean kQuants = kQuants(file);
                float tolerance = kQuants ? K_QUANT_TOLERANCE : LAYER_TOLERANCE;
                Diff self = compare(tokenPath, batched, tolerance, 0);
                if (!path.batchesPrompts()) {
                    // The prompt ran token by token: all there is to check is that chunks change nothing. The CPU
                    // comparison is the layer rows' (a random prompt flips a near-tied expert choice of deepseek2's
                    // random weights at single positions, measured: docs/benchmarks.md#kernel-findings).
                    return result(true, gpuShare, placement, self, expected.size(), kQuants,
                            "token by token (not batched for this model), compared with the GPU's own token path",
                            self.maxAbsDiff());
                }
                Diff d = compare(expected, batched, tolerance, kQuants ? K_QUANT_NEAR_TIE : NEAR_TIE);
                return result(true, gpuShare, placement, d, expected.size(), kQuants,
                        "batched (" + promptLength + " tokens in 2 chunks, CPU-tier experts " + (staged ? "staged" : "on the CPU") + ")",
                        self.maxAbsDiff()).withFlashGap(flashGap(reference, expected, batched));
            } finally {
                if (before == null) {
                    System.clearProperty(GpuPrefill.STAGE_PROPERTY);
                } else {
                    System.setProperty(GpuPrefill.STAGE_PROPERTY, before);
                }
            }
        }
    }

    /**
     * What the GPU layer path is held to: the CPU reference itself in the non-flash order, else the same tokens
     * replayed in the non-flash order (the GPU's attention order; see {@link #ORDER}).
     */
    private static List<float[]> layerReference(GgufFile file, Parallel parallel, List<float[]> reference, int[] prompt,
                                                int steps, int[] tokens) {
        return ORDER.flash()
                ? GreedyDecoder.run(Model.load(file, parallel, AttentionOrder.NON_FLASH), prompt, steps, tokens)
                : reference;
    }

    /** With the flash reference: the GPU's and the non-flash CPU order's largest distance to it; null otherwise. */
    private static float[] flashGap(List<float[]> flash, List<float[]> nonFlash, List<float[]> gpu) {
        if (flash == nonFlash) {
            return null;
        }
        return new float[] {compare(flash, gpu, Float.MAX_VALUE, 0).maxAbsDiff(),
                compare(flash, nonFlash, Float.MAX_VALUE, 0).maxAbsDiff()};
    }

    private static Result result(boolean layers, double gpuShare, ExpertPlacement placement, Diff d, int positions,
                                 boolean kQuants, String prompt, float tokenPathDiff) {
        return placement == null
                ? new Result(layers, gpuShare, 0, 0, 0, d.maxAbsDiff(), positions, d.mismatches(), d.nearTies(),
                        d.widestFlip(), kQuants, d.outliers(), prompt, tokenPathDiff, null)
                : new Result(layers, gpuShare, placement.current().count(Tier.GPU), placement.catalog().size(),
                        placement.byteHitRate(Tier.GPU), d.maxAbsDiff(), positions, d.mismatches(), d.nearTies(),
                        d.widestFlip(), kQuants, d.outliers(), prompt, tokenPathDiff, null);
    }

    /** Position by position: the largest |logit difference|, argmax differences beyond / within {@code nearTie}. */
    private static Diff compare(List<float[]> expected, List<float[]> actual, float tolerance, float nearTie) {
        float maxDiff = 0;
        int mismatches = 0, nearTies = 0;
        float widestFlip = 0;
        int outliers = 0;
        for (int i = 0; i < expected.size(); i++) {
            float[] e = expected.get(i), a = actual.get(i);
            float positionDiff = 0;
            for (int v = 0; v < e.length; v++) {
                float d = Math.abs(e[v] - a[v]);
                positionDiff = Float.isNaN(d) ? Float.POSITIVE_INFINITY : Math.max(positionDiff, d);
            }
            maxDiff = Math.max(maxDiff, positionDiff);
            outliers += positionDiff > tolerance ? 1 : 0;
            int cpuTop = Sampler.argmax(e), gpuTop = Sampler.argmax(a);
            if (cpuTop != gpuTop) {
                widestFlip = Math.max(widestFlip, e[cpuTop] - e[gpuTop]);
                if (e[cpuTop] - e[gpuTop] <= nearTie) {
                    nearTies++;
                } else {
                    mismatches++;
                }
            }
        }
        return new Diff(maxDiff, mismatches, nearTies, widestFlip, outliers);
    }

    /** Whether any matrix of {@code file} is a K-quant, which the two paths meet with differently rounded activations. */
    static boolean kQuants(GgufFile file) {
        return file.tensors().stream().anyMatch(t -> switch (t.type()) {
            case Q4_K, Q5_K, Q6_K -> true;
            default -> false;
        });
    }

    /** Writes the default check model (tinyQwen3Moe with Q8_0 weights, which the GPU kernels take). */
    public static Path tinyModel(Path dir) {
        return tinyModel(SyntheticModels.tinyQwen3Moe(), dir);
    }

    /**
     * Writes {@code spec} with Q8_0 weights into {@code dir}: e.g. tinyDeepseek2 (latent attention with the
     * q LoRA and split k_b/v_b, a leading dense block, a shared expert, sigmoid group routing with a selection
     * bias, YaRN) or tinyLlama (dense FFN blocks only).
     */
    public static Path tinyModel(SyntheticModels.Spec spec, Path dir) {
        return tinyModel(spec, GgmlType.Q8_0, dir);
    }

    /** Writes {@code spec} with {@code type} weights into {@code dir}. */
    public static Path tinyModel(SyntheticModels.Spec spec, GgmlType type, Path dir) {
        return SyntheticModels.write(spec.withWeightType(type),
                dir.resolve(spec.name() + "-" + type.name().toLowerCase(java.util.Locale.ROOT) + ".gguf"));
    }

    /**
     * {@code GpuParityCheck <kernels.ptx> [model.gguf]}: with a model, its experts-only, layer-path and batched
     * prompt checks ({@link #runPrefill});
     * without, tinyQwen3Moe's and tinyDeepseek2's (Q8_0; split k_b/v_b, then a fused kv_b), then the layer path on the dense tinyLlama (Q8_0, F16)
     * and on an F32 tinyQwen3Moe, then tinyQwen3Moe's in Q4_K, Q5_K, Q6_K and Q4_0.
     */
    public static void main(String[] args) throws Exception {
        if (args.length < 1 || args.length > 2) {
            System.err.println("usage: GpuParityCheck <kernels.ptx> [model.gguf]");
            System.exit(2);
        }
        Path kernels = Path.of(args[0]);
        System.out.println("CPU reference: " + ORDER);
        Path dir = Files.createTempDirectory("gpu-parity");
        boolean ok;
        if (args.length == 2) {
            ok = checkMoe(Path.of(args[1]), kernels);
        } else {
            ok = checkMoe(tinyModel(dir), kernels);
            System.out.println("-- tiny-deepseek2 (MLA, q LoRA, dense block 0, shared expert, sigmoid groups, YaRN)");
            ok &= checkMoe(tinyModel(SyntheticModels.tinyDeepseek2(), dir), kernels);
            System.out.println("-- tiny-deepseek2 with a fused attn_kv_b (decompressed MLA)");
            SyntheticModels.Spec ds = SyntheticModels.tinyDeepseek2();
            ok &= checkMoe(tinyModel(ds.withMla(ds.mla().withSplitKvB(false)).withName("tiny-deepseek2-fused"), dir),
                    kernels);
            System.out.println("-- tiny-llama (dense), Q8_0 then F16");
            for (GgmlType type : new GgmlType[] {GgmlType.Q8_0, GgmlType.F16}) {
                Result r = run(tinyModel(SyntheticModels.tinyLlama(), type, dir), kernels, 0.0, 48, true);
                System.out.println(r);
                ok &= r.ok();
            }
            Result dense = runPrefill(tinyModel(SyntheticModels.tinyLlama(), dir), kernels, 0.0, PREFILL_PROMPT, 24,
                    false);
            System.out.println(dense);
            ok &= dense.ok();
            System.out.println("-- tiny-qwen3moe F32 (layers on the GPU, experts on the CPU: F32 experts stay there)");
            Result r = run(tinyModel(SyntheticModels.tinyQwen3Moe(), GgmlType.F32, dir), kernels, 0.0, 48, true);
            System.out.println(r);
            ok &= r.ok();
            for (GgmlType type : new GgmlType[] {GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q6_K, GgmlType.Q4_0}) {
                System.out.println("-- tiny-qwen3moe " + type + " (experts, attention, head in their GGUF blocks)");
                ok &= checkMoe(tinyModel(SyntheticModels.tinyQwen3Moe(), type, dir), kernels);
            }
        }
        System.exit(ok ? 0 : 1);
    }

    private static boolean checkMoe(Path model, Path kernels) {
        boolean ok = true;
        for (double share : new double[] {1.0, 0.3}) {
            Result r = run(model, kernels, share, 24);
            System.out.println(r);
            ok &= r.ok() && r.gpuExperts() > 0;
        }
        for (double share : new double[] {0.0, 0.3, 1.0}) {
            Result r = run(model, kernels, share, 48, true);
            System.out.println(r);
            ok &= r.ok() && (share == 0) == (r.gpuExperts() == 0);
        }
        for (double share : new double[] {0.0, 0.3, 1.0}) {
            for (boolean staged : share == 1.0 ? new boolean[] {false} : new boolean[] {false, true}) {
                Result r = runPrefill(model, kernels, share, PREFILL_PROMPT, 24, staged);
                System.out.println(r);
                ok &= r.ok();
            }
        }
        return ok;
    }
}
