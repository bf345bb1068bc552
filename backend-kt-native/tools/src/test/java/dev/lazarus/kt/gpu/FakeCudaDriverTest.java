package dev.lazarus.kt.gpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.synthetic.SyntheticModels;
import dev.lazarus.kt.testsupport.GgufCopies;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The CUDA tier end to end without a GPU: src/test/c/fake_cuda.cpp stands in for libcuda.so.1 and runs the
 * real kernels of src/main/cuda/*.cu on the CPU (each thread a fiber, warps in lockstep), so this checks the
 * FFM bindings, kernel arguments, buffer offsets, staging, per-thread contexts, frees AND the kernels'
 * logic against the CPU path. What only a GPU shows (CUDA's compiler and math library, timing) is left to
 * GpuParityTest / scripts/device/gpu-check.sh. Needs a C++ compiler ({@code c++}); skipped, saying so,
 * without one.
 */
class FakeCudaDriverTest {

    @org.junit.jupiter.api.io.TempDir
    static Path dir;

    static Path library;

    /**
     * Largest |logit difference| of the batched prompt to the token-by-token GPU path. The Q8_0 products of the prompt
     * fold each 32-value block's sum in block order (tensor-core tiles, mma.cuh) where the decode kernels fold per
     * lane and quarter, so the two round differently: measured 8.79e-2 on tiny-llama (its CPU comparison's largest
     * difference is the same 8.79e-2) and 0 on every tiny-qwen3moe case.
     */
    static final float TOKEN_PATH_DIFF = 0.1f;

    @BeforeAll
    static void buildFakeDriver() throws Exception {
        buildFakeDriver0();
    }

    /** Builds the fake driver once per test JVM (the GPU test classes share it) and selects it. */
    static synchronized void buildFakeDriver0() throws Exception {
        if (library != null) {
            System.setProperty("lazarus.cuda.library", library.toString());
            return;
        }
        Path home = Files.createTempDirectory("lazarus-fakecuda");
        home.toFile().deleteOnExit();
        Path built = home.resolve("libfakecuda.so");
        Path source = Path.of("src/test/c/fake_cuda.cpp").toAbsolutePath();
        Process cc;
        try {
            cc = new ProcessBuilder("c++", "-O1", "-std=c++17", "-shared", "-fPIC", "-Wno-unknown-pragmas",
                    "-I", source.resolveSibling("shim").toString(), "-I", Path.of("../kernels/src/main/cuda").toAbsolutePath().toString(),
                    "-o", built.toString(), source.toString())
                    .redirectErrorStream(true).start();
        } catch (IOException e) {
            assumeTrue(false, "no C++ compiler (c++) to build the fake CUDA driver: " + e.getMessage());
            return;
        }
        assertThat(cc.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(cc.exitValue()).as(new String(cc.getInputStream().readAllBytes())).isZero();
        built.toFile().deleteOnExit();
        library = built;
        System.setProperty("lazarus.cuda.library", library.toString());
    }

    @AfterAll
    static void restore() {
        System.clearProperty("lazarus.cuda.library");
    }

    static int primaryContextFlags() throws Throwable {
        var lookup = SymbolLookup.libraryLookup(library, Arena.global());
        var h = Linker.nativeLinker().downcallHandle(lookup.find("fake_primary_flags").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT));
        return (int) h.invokeExact();
    }

    static long liveAllocations() throws Throwable {
        var lookup = SymbolLookup.libraryLookup(library, Arena.global());
        var h = Linker.nativeLinker().downcallHandle(lookup.find("fake_live_allocations").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_LONG));
        return (long) h.invokeExact();
    }

    static long counter(String name) throws Throwable {
        var lookup = SymbolLookup.libraryLookup(library, Arena.global());
        var h = Linker.nativeLinker().downcallHandle(lookup.find(name).orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_LONG));
        return (long) h.invokeExact();
    }

    static long launchesOf(String kernel) throws Throwable {
        var lookup = SymbolLookup.libraryLookup(library, Arena.global());
        var h = Linker.nativeLinker().downcallHandle(lookup.find("fake_launches_of").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.ADDRESS));
        try (Arena a = Arena.ofConfined()) {
            return (long) h.invokeExact(a.allocateFrom(kernel));
        }
    }

    /**
     * The batched prompt (GpuPrefill: a 20-token prompt as two forward passes of 11 and 9 tokens, the second past
     * the prefix the device cache holds, partial Q8_0 tiles) against the CPU path and against the same GPU placement
     * fed the prompt token by token: same greedy tokens, logits within the layer tolerance of the CPU's and within
     * {@link #TOKEN_PATH_DIFF} of the token path's (the CPU-tier experts computed by the CPU as decoding does, or
     * staged to the "GPU"), the tensor-core tile kernels did run, and everything is freed (registrations included).
     * The mapped expert tensors are registered with the driver only once a prompt stages, and the staging uploads
     * only the CPU tier's experts (the GPU tier's have their device copies).
     */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.CsvSource({"tiny-qwen3moe,0.5,false", "tiny-qwen3moe,0.5,true",
            "tiny-qwen3moe,1.0,false", "tiny-llama,0.0,false"})
    void theBatchedPromptComputesTheTokenPathsLogits(String preset, double share, boolean staged) throws Throwable {
        Path kernels = Files.writeString(dir.resolve("kernels.ptx"), "// fake module: the fake driver ignores it\n");
        long batched = launchesOf("gemm_tokens_q8"), grouped = launchesOf("moe_gate_up_q8");
        long registrations = counter("fake_host_registrations"), uploaded = counter("fake_registered_upload_bytes");
        Path model = GpuParityCheck.tinyModel(SyntheticModels.preset(preset), dir);
        GpuParityCheck.Result r = GpuParityCheck.runPrefill(model, kernels, share, 20, 3, staged);
        assertThat(r.ok()).as(r.toString()).isTrue();
        assertThat(r.tokenMismatches()).as(r.toString()).isZero();
        assertThat(r.maxAbsDiff()).as(r.toString()).isLessThanOrEqualTo(GpuParityCheck.LAYER_TOLERANCE);
        assertThat(r.tokenPathDiff()).as(r.toString()).isLessThanOrEqualTo(TOKEN_PATH_DIFF);
        assertThat(launchesOf("gemm_tokens_q8")).as("batched projections launched as Q8_0 tiles").isGreaterThan(batched);
        if (share > 0 || staged || preset.equals("tiny-llama")) { // else every expert is the CPU's
            assertThat(launchesOf("moe_gate_up_q8")).as("grouped SwiGLUs launched as Q8_0 tiles").isGreaterThan(grouped);
        }
        if (!staged) {
            assertThat(counter("fake_host_registrations") - registrations)
                    .as("no expert tensor registered before a prompt stages").isZero();
        } else if (share < 1) {
            assertThat(counter("fake_host_registrations") - registrations).as("registered when staging").isPositive();
            // each of the two chunks stages every MoE block once, only the experts the CPU tier holds
            long cpuExperts = r.experts() - r.gpuExperts();
            assertThat(counter("fake_registered_upload_bytes") - uploaded).as(r.toString())
                    .isEqualTo(2 * cpuExperts * expertBytes(model, r.experts()));
        }
        assertThat(liveAllocations()).as("device and pinned buffers left after close").isZero();
    }

    /** Bytes of one expert's gate, up and down (the tiny models' experts are all alike). */
    private static long expertBytes(Path model, int experts) {
        try (dev.lazarus.kt.gguf.GgufFile f = dev.lazarus.kt.gguf.GgufFile.open(model)) {
            long all = f.tensors().stream().filter(t -> t.name().contains("_exps")).mapToLong(t -> t.byteSize()).sum();
            assertThat(all % experts).isZero();
            return all / experts;
        }
    }

    @ParameterizedTest
    @ValueSource(doubles = {1.0, 0.3})
    void theTierComputesTheCpuLogitsAndFreesEverything(double share) throws Throwable {
        Path kernels = Files.writeString(dir.resolve("experts.ptx"), "// fake module: the fake driver ignores it\n");
        GpuParityCheck.Result r = GpuParityCheck.run(GpuParityCheck.tinyModel(dir), kernels, share, 4);
        assertThat(r.gpuExperts()).isPositive();
        assertThat(r.gpuByteHitRate()).isPositive();
        assertThat(r.maxAbsDiff()).as(r.toString()).isLessThanOrEqualTo(GpuParityCheck.TOLERANCE);
        assertThat(liveAllocations()).as("device and pinned buffers left after close").isZero();
    }

    /**
     * deepseek32, whose lightning indexer keeps the layer path off the GPU: its routed experts on the GPU tier, the
     * rest (sparse attention included) on the CPU, compute the CPU's logits.
     */
    @Test
    void deepseek32sExpertsOnTheTierBesideItsLayersOnTheCpuComputeTheCpuLogits() throws Throwable {
        Path kernels = Files.writeString(dir.resolve("experts.ptx"), "// fake module: the fake driver ignores it\n");
        GpuParityCheck.Result r = GpuParityCheck.run(GpuParityCheck.tinyModel(SyntheticModels.tinyDeepseek32(), dir),
                kernels, 0.5, 16);
        assertThat(r.gpuExperts()).isPositive();
        assertThat(r.maxAbsDiff()).as(r.toString()).isLessThanOrEqualTo(GpuParityCheck.TOLERANCE);
        assertThat(liveAllocations()).as("device and pinned buffers left after close").isZero();
    }

    /**
     * The GPU layer path (attention, norms, router, head on the "GPU", experts split by placement: routed on the
     * device, all of them there at 1.0, none at 0.0) against the CPU path: same greedy tokens, logits within the
     * layer tolerance, and everything freed.
     */
    @ParameterizedTest
    @ValueSource(doubles = {0.0, 0.5, 1.0})
    void theLayerPathComputesTheCpuLogitsAndFreesEverything(double share) throws Throwable {
        Path kernels = Files.writeString(dir.resolve("kernels.ptx"), "// fake module: the fake driver ignores it\n");
        GpuParityCheck.Result r = GpuParityCheck.run(GpuParityCheck.tinyModel(dir), kernels, share, 6, true);
        assertThat(r.layers()).isTrue();
        assertThat(r.gpuExperts() > 0).isEqualTo(share > 0);
        assertThat(r.tokenMismatches()).as(r.toString()).isZero();
        assertThat(r.maxAbsDiff()).as(r.toString()).isLessThanOrEqualTo(GpuParityCheck.LAYER_TOLERANCE);
        assertThat(liveAllocations()).as("device and pinned buffers left after close").isZero();
    }

    /**
     * A hybrid token launches a block's GPU experts only when its routes chose one of them, after the CPU's experts
     * started (half of tiny-qwen3moe's experts on the "GPU": 2 of 8 chosen leave about a fifth of the blocks without a
     * GPU expert); before, every block holding a GPU expert launched them for every token, ahead of the wait for the
     * routes. The logits stay the CPU's.
     */
    @Test
    void theLayerPathLaunchesTheGpuExpertsOnlyForBlocksThatChoseOne() throws Throwable {
        Path kernels = Files.writeString(dir.resolve("kernels.ptx"), "// fake module: the fake driver ignores it\n");
        long before = launchesOf("moe_gate_up_q");
        GpuParityCheck.Result r = GpuParityCheck.run(GpuParityCheck.tinyModel(dir), kernels, 0.5, 6, true);
        long launched = launchesOf("moe_gate_up_q") - before;
        long blockTokens = (long) r.positions() * SyntheticModels.tinyQwen3Moe().layers(); // token by token, every block MoE
        assertThat(launched).as("GPU expert launches over %d (token, block) pairs", blockTokens)
                .isPositive().isLessThan(blockTokens);
        assertThat(r.tokenMismatches()).as(r.toString()).isZero();
        assertThat(r.maxAbsDiff()).as(r.toString()).isLessThanOrEqualTo(GpuParityCheck.LAYER_TOLERANCE);
        assertThat(liveAllocations()).as("device and pinned buffers left after close").isZero();
    }

    /**
     * deepseek2 on the layer path: latent attention (q LoRA or not, split k_b/v_b or fused kv_b, YaRN), the
     * leading dense block and
     * the shared expert on the "GPU", sigmoid group routing on the host; a dense llama, which makes no round
     * trip per block, in Q8_0 and F16; and F32 attention, router and head (qwen3moe, its experts on the CPU).
     */
    @ParameterizedTest
    @ValueSource(strings = {"tinyDeepseek2:0.0:Q8_0", "tinyDeepseek2:0.5:Q8_0", "tinyDeepseek2-lite:0.5:Q8_0",
                            "tinyDeepseek2-fused:0.5:Q8_0",
                            "tinyLlama:0.0:Q8_0", "tinyLlama:0.0:F16", "tinyQwen3Moe:0.0:F32"})
    void theLayerPathComputesDeepseek2DenseAndFloatModelsLikeTheCpu(String modelShareType) throws Throwable {
        String[] parts = modelShareType.split(":");
        double share = Double.parseDouble(parts[1]);
        Path kernels = Files.writeString(dir.resolve("kernels.ptx"), "// fake module: the fake driver ignores it\n");
        SyntheticModels.Spec spec = SyntheticModels.preset(parts[0].replaceAll("-.*", ""));
        if (parts[0].endsWith("-lite")) { // DeepSeek-V2-Lite's form: queries by one attn_q, no q LoRA
            SyntheticModels.Mla m = spec.mla();
            spec = spec.withMla(new SyntheticModels.Mla(0, m.kvLoraRank(), m.qkNopeDim(), m.qkRopeDim(), m.vHeadDim(),
                    m.splitKvB())).withName("tiny-deepseek2-lite");
        } else if (parts[0].endsWith("-fused")) { // older conversions: one attn_kv_b, the decompressed layout
            spec = spec.withMla(spec.mla().withSplitKvB(false)).withName("tiny-deepseek2-fused");
        }
        Path model = GpuParityCheck.tinyModel(spec, GgmlType.valueOf(parts[2]), dir);
        GpuParityCheck.Result r = GpuParityCheck.run(model, kernels, share, 6, true);
        assertThat(r.layers()).isTrue();
        assertThat(r.gpuExperts() > 0).isEqualTo(share > 0);
        assertThat(r.tokenMismatches()).as(r.toString()).isZero();
        assertThat(r.maxAbsDiff()).as(r.toString()).isLessThanOrEqualTo(GpuParityCheck.LAYER_TOLERANCE);
        assertThat(liveAllocations()).as("device and pinned buffers left after close").isZero();
    }

    /**
     * A router tensor in deepseek2's leading dense block (dense by leading_dense_block_count): the layer path reads
     * the block description the CPU blocks were assembled from, so it runs that block's dense FFN as the CPU does
     * (it used to take any block with a router for an experts block and ask the placement for its experts).
     */
    @Test
    void aRouterInALeadingDenseBlockStaysDenseOnTheLayerPath() throws Throwable {
        Path kernels = Files.writeString(dir.resolve("kernels.ptx"), "// fake module: the fake driver ignores it\n");
        Path plain = GpuParityCheck.tinyModel(SyntheticModels.tinyDeepseek2(), dir);
        Path stray = GgufCopies.withCopiedTensor(plain, dir.resolve("stray-router.gguf"), "blk.1.ffn_gate_inp.weight",
                "blk.0.ffn_gate_inp.weight");
        GpuParityCheck.Result r = GpuParityCheck.run(stray, kernels, 0.5, 6, true);
        assertThat(r.layers()).isTrue();
        assertThat(r.tokenMismatches()).as(r.toString()).isZero();
        assertThat(r.maxAbsDiff()).as(r.toString()).isLessThanOrEqualTo(GpuParityCheck.LAYER_TOLERANCE);
        assertThat(liveAllocations()).as("device and pinned buffers left after close").isZero();
    }

    /**
     * Experts, attention, router and head in Q4_0 and the K-quants (their GGUF blocks against a Q8_0 activation,
     * quants.cuh): the experts-only tier and the layer path (all experts, half of them) against the CPU path,
     * which meets K-quants with Q8_K activations: the tolerance is {@link GpuParityCheck#tolerance}'s for the type.
     * With half of the experts on the CPU the token runs launch by launch, so the fake driver counts them: q, k and
     * v of a K-quant block are one launch (gemv3_q), as Q8_0's are.
     */
    @ParameterizedTest
    @ValueSource(strings = {"Q4_K", "Q5_K", "Q6_K", "Q4_0"})
    void kQuantExpertsAndLayersComputeTheCpuLogits(String type) throws Throwable {
        Path kernels = Files.writeString(dir.resolve("kernels.ptx"), "// fake module: the fake driver ignores it\n");
        Path model = GpuParityCheck.tinyModel(SyntheticModels.tinyQwen3Moe(), GgmlType.valueOf(type), dir);
        GpuParityCheck.Result tier = GpuParityCheck.run(model, kernels, 1.0, 4);
        System.out.println(type + " " + tier);
        assertThat(tier.gpuExperts()).as(tier.toString()).isEqualTo(tier.experts());
        assertThat(tier.ok()).as(tier.toString()).isTrue();
        for (double share : new double[] {1.0, 0.5}) {
            long qkvLaunches = launchesOf("gemv3_q");
            GpuParityCheck.Result r = GpuParityCheck.run(model, kernels, share, 6, true);
            System.out.println(type + " " + r);
            if (share < 1.0) {
                assertThat(launchesOf("gemv3_q")).as("q, k and v in one launch").isGreaterThan(Math.max(0, qkvLaunches));
            }
            assertThat(r.layers()).isTrue();
            assertThat(r.gpuExperts()).isPositive();
            assertThat(r.tokenMismatches()).as(r.toString()).isZero();
            assertThat(r.ok()).as(r.toString()).isTrue();
        }
        assertThat(liveAllocations()).as("device and pinned buffers left after close").isZero();
    }

    /** Blocking sync (the benchmark's {@code +blocking}) only changes how the host waits: same results. */
    @Test
    void blockingSyncSetsThePrimaryContextFlagAndComputesTheSame() throws Throwable {
        Path kernels = Files.writeString(dir.resolve("kernels.ptx"), "// fake module: the fake driver ignores it\n");
        System.setProperty(CudaExpertTier.BLOCKING_SYNC_PROPERTY, "true");
        try {
            GpuParityCheck.Result r = GpuParityCheck.run(GpuParityCheck.tinyModel(dir), kernels, 0.5, 4, true);
            assertThat(primaryContextFlags()).isEqualTo(CudaDriver.SCHED_BLOCKING_SYNC);
            assertThat(r.tokenMismatches()).as(r.toString()).isZero();
            assertThat(r.maxAbsDiff()).as(r.toString()).isLessThanOrEqualTo(GpuParityCheck.LAYER_TOLERANCE);
        } finally {
            System.clearProperty(CudaExpertTier.BLOCKING_SYNC_PROPERTY);
        }
    }
}
