package dev.lazarus.kt.gpu;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.model.ExpertRouter;
import dev.lazarus.kt.model.MoeConfig;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Routing on the device (moe.cu's moe_route, run by the fake driver of {@link FakeCudaDriverTest}) against the
 * host's {@link ExpertRouter}: the same experts in the same order and the same weights, bit for bit, for softmax
 * and sigmoid gating, with and without a selection bias, renormalisation and scale, expert counts with a
 * non-multiple-of-16 tail and logits with ties; and the GPU layer path with every expert on the GPU synchronises
 * with the host once per token (not once per MoE block) and launches the token as one CUDA graph.
 */
@ExtendWith(FakeCudaDriver.class)
class DeviceRoutingTest {

    @TempDir
    static Path dir;

    @ParameterizedTest
    @CsvSource({
        "64, 8, SOFTMAX, true, 0, false, false",   // qwen3moe
        "64, 8, SOFTMAX, true, 0, false, true",    // ties: quantized logits
        "37, 4, SOFTMAX, false, 0, false, false",  // a tail past the 16-lane chunks, raw softmax weights
        "160, 6, SIGMOID, true, 2.5, true, false", // sigmoid, selection bias, scaled (deepseek's kind, ungrouped)
        "128, 8, SIGMOID, false, 16, true, true"})
    void deviceRoutingChoosesAndWeighsLikeTheHostRouter(int experts, int used, MoeConfig.Gating gating,
                                                        boolean normalize, float scale, boolean withBias,
                                                        boolean ties) throws Exception {
        MoeConfig moe = new MoeConfig(experts, used, 64, 0, 0, gating, normalize, scale, 0, 0);
        assertThat(DeviceMoe.routable(moe)).isTrue();
        Random random = new Random(experts * 31L + used);
        float[] bias = null;
        if (withBias) {
            bias = new float[experts];
            for (int e = 0; e < experts; e++) {
                bias[e] = (float) random.nextGaussian() * 0.1f;
            }
        }
        ExpertRouter host = new ExpertRouter(moe, bias);
        Path kernels = Files.writeString(dir.resolve("kernels.ptx"), "// fake module: the fake driver ignores it\n");
        CudaDriver cu = CudaDriver.load(new StringBuilder()).orElseThrow();
        cu.init();
        try (CudaExpertTier tier = CudaExpertTier.open(cu, 0, kernels); Arena arena = Arena.ofConfined()) {
            cu.setCurrent(tier.context());
            MemorySegment stream = cu.createStream();
            LayerKernels kernels1 = new LayerKernels(cu, tier.module(), stream, arena);
            long dLogits = cu.malloc(4L * experts), dBias = withBias ? cu.malloc(4L * experts) : 0;
            long dIds = cu.malloc(4L * used), dWeights = cu.malloc(4L * used);
            MemorySegment h = cu.mallocHost(8L * experts);
            try {
                if (withBias) {
                    MemorySegment.copy(bias, 0, h, JAVA_FLOAT, 0, experts);
                    cu.copyToDevice(dBias, h, 4L * experts, stream);
                    cu.synchronize(stream);
                }
                for (int trial = 0; trial < 20; trial++) {
                    float[] logits = new float[experts];
                    for (int e = 0; e < experts; e++) {
                        float v = (float) random.nextGaussian() * 3f;
                        logits[e] = ties ? Math.round(v) : v; // few distinct values: many equal probabilities
                    }
                    MemorySegment.copy(logits, 0, h, JAVA_FLOAT, 0, experts);
                    cu.copyToDevice(dLogits, h, 4L * experts, stream);
                    kernels1.moeRoute(dLogits, dBias, experts, used, gating == MoeConfig.Gating.SIGMOID, normalize,
                            scale, dIds, dWeights);
                    cu.copyToHost(h, dIds, 4L * used, stream);
                    cu.copyToHost(h.asSlice(4L * used), dWeights, 4L * used, stream);
                    cu.synchronize(stream);
                    ExpertRouter.Route expected = host.route(logits);
                    int[] ids = new int[used];
                    float[] weights = new float[used];
                    MemorySegment.copy(h, JAVA_INT, 0, ids, 0, used);
                    MemorySegment.copy(h, JAVA_FLOAT, 4L * used, weights, 0, used);
                    assertThat(ids).as("trial %d", trial).containsExactly(expected.experts());
                    assertThat(weights).as("trial %d", trial).containsExactly(expected.weights());
                }
            } finally {
                for (long p : new long[] {dLogits, dBias, dIds, dWeights}) {
                    if (p != 0) {
                        cu.free(p);
                    }
                }
                cu.freeHost(h);
                cu.destroyStream(stream);
            }
        }
    }

    /**
     * Eight more decode steps cost eight more stream syncs: one per pass (its logits), none per MoE block (the
     * host-routed path made 1 + blocks per pass). Counted as a difference of two runs, so the setup's syncs (expert
     * uploads, the bias) cancel; a score buffer that grows once more in the longer run may add one.
     */
    @Test
    void withEveryExpertOnTheGpuTheLayerPathSynchronisesOncePerPass() throws Throwable {
        Path kernels = Files.writeString(dir.resolve("kernels.ptx"), "// fake module: the fake driver ignores it\n");
        Path model = GpuParityCheck.tinyModel(dir);
        long[] syncs = new long[2];
        int[] steps = {4, 12};
        for (int i = 0; i < 2; i++) {
            long before = streamSyncs();
            GpuParityCheck.Result r = GpuParityCheck.run(model, kernels, 1.0, steps[i], true);
            assertThat(r.tokenMismatches()).as(r.toString()).isZero();
            syncs[i] = streamSyncs() - before;
        }
        assertThat(syncs[1] - syncs[0]).as("stream syncs for 8 more passes (%s)", java.util.Arrays.toString(syncs))
                .isBetween(8L, 10L);
    }

    /**
     * With every expert on the GPU a pass is one CUDA graph launch and no kernel launch of its own: eight more
     * passes, eight more graph launches and not one more kernel launch (the graph is captured once, at the first
     * pass; counted as a difference of two runs, so the setup cancels; a score buffer that grows once more in the
     * longer run adds one capture, whose launches are recorded, not run). The replayed graph computes the CPU
     * path's logits at every position (the check), so the kernels read the position from device memory, not from
     * captured arguments; and every graph is freed with the layer path.
     */
    @Test
    void withEveryExpertOnTheGpuAPassIsOneGraphLaunch() throws Throwable {
        Path kernels = Files.writeString(dir.resolve("kernels.ptx"), "// fake module: the fake driver ignores it\n");
        Path model = GpuParityCheck.tinyModel(dir);
        long[] graphs = new long[2], launches = new long[2];
        int[] steps = {4, 12};
        for (int i = 0; i < 2; i++) {
            long graphsBefore = counter("fake_graph_launches"), launchesBefore = counter("fake_kernel_launches");
            GpuParityCheck.Result r = GpuParityCheck.run(model, kernels, 1.0, steps[i], true);
            assertThat(r.tokenMismatches()).as(r.toString()).isZero();
            assertThat(r.maxAbsDiff()).as(r.toString()).isLessThanOrEqualTo(r.tolerance());
            graphs[i] = counter("fake_graph_launches") - graphsBefore;
            launches[i] = counter("fake_kernel_launches") - launchesBefore;
        }
        assertThat(graphs[1] - graphs[0]).as("graph launches for 8 more passes").isEqualTo(8L);
        assertThat(launches[1] - launches[0]).as("kernel launches for 8 more passes").isZero();
        assertThat(counter("fake_live_graphs")).as("graphs left behind").isZero();
    }

    /** With experts on the CPU a pass waits for its routes mid-token: no graph, the kernels launched one by one. */
    @Test
    void withExpertsOnTheCpuNoGraphIsLaunched() throws Throwable {
        Path kernels = Files.writeString(dir.resolve("kernels.ptx"), "// fake module: the fake driver ignores it\n");
        Path model = GpuParityCheck.tinyModel(dir);
        long before = counter("fake_graph_launches");
        GpuParityCheck.Result r = GpuParityCheck.run(model, kernels, 0.5, 4, true);
        assertThat(r.tokenMismatches()).as(r.toString()).isZero();
        assertThat(counter("fake_graph_launches") - before).isZero();
    }

    private static long streamSyncs() throws Throwable {
        return counter("fake_stream_syncs");
    }

    private static long counter(String name) throws Throwable {
        var lookup = SymbolLookup.libraryLookup(FakeCudaDriverTest.library, Arena.global());
        var h = Linker.nativeLinker().downcallHandle(lookup.find(name).orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_LONG));
        return (long) h.invokeExact();
    }
}
