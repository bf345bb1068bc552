package dev.lazarus.kt.correctness;

import dev.lazarus.kt.tensor.KernelConfig;
import dev.lazarus.kt.correctness.ParityModels.Format;
import dev.lazarus.kt.tensor.GgmlOrders;
import dev.lazarus.kt.testsupport.GgmlCpuVariant;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * The contracts with the ggml CPU variants other than this host's reference, on every one the host runs: the AVX2
 * variant (haswell: what every AVX2-only machine loads) everywhere, an AVX-512 variant other than the reference,
 * and on AMX hosts the sapphirerapids variant that llama-server would load by itself there. So the AVX2 contract
 * stays under test on AVX-512 machines, the AMX one on Intel machines, and identity with the reference on all.
 * The AMX variant is not held to a contract on deepseek2: llama-server aborts loading its F16 and Q8_0 models there
 * and computes its Q4_K_M far from every other variant (hidden states up to 0.8 relative L2 from its own zen4
 * variant), a llama.cpp defect recorded in docs/fidelity.md.
 */
@Tag("llama-server")
class VariantContractTest extends EngineParityFixture {

    private static final List<Arguments> MODELS = List.of(Arguments.of(ParityModels.QWEN3MOE, Format.Q8_0),
            Arguments.of(ParityModels.QWEN3MOE, Format.Q4_K_M), Arguments.of(ParityModels.LLAMA, Format.F16),
            Arguments.of(ParityModels.DEEPSEEK2, Format.Q4_K_M), Arguments.of(ParityModels.LLAMA, Format.BF16));

    static Stream<Arguments> cases() {
        GgmlCpuVariant reference = GgmlCpuVariant.reference();
        return Stream.of(GgmlCpuVariant.HASWELL, GgmlCpuVariant.SKYLAKEX, GgmlCpuVariant.SAPPHIRERAPIDS)
                .filter(v -> v != reference && v.runsOnHost())
                .flatMap(v -> MODELS.stream().filter(m -> !(v.usesAmx() && m.get()[0] == ParityModels.DEEPSEEK2))
                        .map(m -> Arguments.of(v, m.get()[0], m.get()[1])));
    }

    @ParameterizedTest(name = "{1} {2} against llama-server on {0}")
    @MethodSource("cases")
    void theEngineKeepsItsContractWithEveryVariantThisHostRuns(GgmlCpuVariant variant, ParityModels arch, Format format) {
        Path model = arch.write(format, dir);
        ParityContract contract = ParityContract.of(variant);
        KernelConfig kernels = KernelConfig.fromSystemProperties().with(GgmlOrders.forVariant(variant.id()));
        try (EngineRunner engine = new EngineRunner(model, parallel, null, kernels)) {
            String what = arch.arch() + " " + format;
            HiddenStateParityTest.assertHiddenStateContract(engine, model, what, contract, AttentionMode.OFF);
            GreedyParityTest.assertGreedyContract(engine, model, what, contract, AttentionMode.OFF);
        }
    }
}
