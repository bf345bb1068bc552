package dev.lazarus.kt.correctness;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.tensor.KernelConfig;
import dev.lazarus.kt.correctness.ParityModels.Format;
import dev.lazarus.kt.matrix.Kernels;
import dev.lazarus.kt.placement.ExpertPlacement;
import dev.lazarus.kt.placement.PlacementConfig;
import dev.lazarus.kt.placement.Tier;
import dev.lazarus.kt.placement.TierBudget;
import dev.lazarus.kt.tensor.NativeKernels;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * With every routed expert in the RAM tier, its Q4_K matrices packed ({@code Q4KPacked}: another byte layout, its
 * own kernels) when the Java kernels run ({@code -Dlazarus.kt.kernels=java}), or into the native kernels' 16-row
 * layout ({@code Q4KNativePacked}, the default where they load), the engine still computes llama-server's numbers on llama-quantize's Q4_K_M models: every prompt
 * token's final hidden state bit for bit (the prefill path: the packed GEMV four activations at a time) and the
 * greedy 64-token continuations with their logprobs (decode: the packed GEMV on rows in pairs), as
 * {@link HiddenStateParityTest} and {@link GreedyParityTest} ask of the experts read in place.
 */
@Tag("llama-server")
class RamTierParityTest extends EngineParityFixture {

    @ParameterizedTest(name = "{0} Q4_K_M, every expert packed in RAM, Java kernels")
    @EnumSource(names = {"QWEN3MOE", "DEEPSEEK2", "DEEPSEEK32", "GLM_DSA", "GLM4MOE", "GPT_OSS", "QWEN35MOE", "QWEN3NEXT", "MINIMAX_M2"})
    void everyExpertPackedInTheRamTierComputesLlamaServersNumbers(ParityModels arch) {
        String previous = System.setProperty(KernelConfig.KERNELS_PROPERTY, "java");
        try {
            everyExpertInRam(arch, AttentionMode.OFF);
        } finally {
            restore(previous);
        }
    }

    /**
     * The same with the host's default kernels: where the native kernels load, the Q4_K experts are packed into their
     * 16-row layout ({@code Q4KNativePacked}, 148 bytes per super-block), else into the Java kernels' one.
     */
    @ParameterizedTest(name = "{0} Q4_K_M, every expert in RAM, default kernels")
    @EnumSource(names = {"QWEN3MOE", "DEEPSEEK2", "DEEPSEEK32", "GLM_DSA", "GLM4MOE", "GPT_OSS", "QWEN35MOE", "QWEN3NEXT", "MINIMAX_M2"})
    void everyExpertInTheRamTierComputesLlamaServersNumbersWithTheDefaultKernels(ParityModels arch) {
        String previous = System.setProperty(KernelConfig.KERNELS_PROPERTY, "auto");
        try {
            everyExpertInRam(arch, AttentionMode.OFF);
        } finally {
            restore(previous);
        }
    }

    /**
     * The native kernels required ({@code native}): Q4_K experts in the native 16-row layout, Q6_K as ggml's blocks,
     * read by the native kernels.
     */
    @ParameterizedTest(name = "{0} Q4_K_M, every expert in RAM, native kernels forced")
    @EnumSource(names = {"QWEN3MOE", "DEEPSEEK2", "DEEPSEEK32", "GLM_DSA", "GLM4MOE", "GPT_OSS", "QWEN35MOE", "QWEN3NEXT", "MINIMAX_M2"})
    void everyExpertInTheRamTierComputesLlamaServersNumbersWithEveryNativeKernel(ParityModels arch) {
        if (NativeKernels.best().isEmpty()) {
            assertThat(System.getenv("CI")).as("CI builds the native kernels: " + NativeKernels.unavailableReason())
                    .isNotEqualTo("true");
            return;
        }
        String previous = System.setProperty(KernelConfig.KERNELS_PROPERTY, "native");
        try {
            everyExpertInRam(arch, AttentionMode.OFF);
        } finally {
            restore(previous);
        }
    }

    /**
     * The same with {@code -fa on} on both sides, default kernels, for the two architectures whose attention differs
     * most (MLA; sinks and a sliding window): the tier changes where expert products run, never the attention, whose
     * order every architecture's own parity case holds in both modes.
     */
    @ParameterizedTest(name = "{0} Q4_K_M, every expert in RAM, default kernels, -fa on")
    @EnumSource(names = {"DEEPSEEK2", "GPT_OSS"})
    void everyExpertInTheRamTierComputesLlamaServersNumbersWithFlashAttention(ParityModels arch) {
        String previous = System.setProperty(KernelConfig.KERNELS_PROPERTY, "auto");
        try {
            everyExpertInRam(arch, AttentionMode.ON);
        } finally {
            restore(previous);
        }
    }

    private void everyExpertInRam(ParityModels arch, AttentionMode mode) {
        Path model = arch.write(Format.Q4_K_M, dir);
        PlacementConfig allInRam = PlacementConfig.cpuOnly().withRam(new TierBudget.Ratio(1));
        try (EngineRunner engine = new EngineRunner(model, parallel, allInRam, mode.order(1))) {
            ExpertPlacement placement = engine.placement();
            assertThat(placement.current().count(Tier.RAM)).as("experts in the RAM tier").isEqualTo(placement.catalog().size());
            // the packed layouts take 152 (Java) or 148 (native) bytes per Q4_K super-block where ggml's takes 144:
            // more bytes held means packed
            assertThat(placement.heldBytes(Tier.RAM)).as("bytes the RAM tier holds: Q4_K experts packed")
                    .isGreaterThan(placement.catalog().totalBytes());
            String what = arch.arch() + " Q4_K_M, experts in RAM, " + Kernels.describe(KernelConfig.fromSystemProperties()) + ", " + mode;
            HiddenStateParityTest.assertHiddenStateContract(engine, model, what, ParityContract.host(), mode);
            GreedyParityTest.assertGreedyContract(engine, model, what, ParityContract.host(), mode);
        }
    }

    private static void restore(String previous) {
        if (previous == null) {
            System.clearProperty(KernelConfig.KERNELS_PROPERTY);
        } else {
            System.setProperty(KernelConfig.KERNELS_PROPERTY, previous);
        }
    }
}
