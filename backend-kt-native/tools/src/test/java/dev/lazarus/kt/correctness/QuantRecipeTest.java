package dev.lazarus.kt.correctness;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.correctness.ParityModels.Format;
import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.gguf.GgufTensorInfo;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The low-bit parity cases ({@link GreedyParityTest}, {@link HiddenStateParityTest} on the wide models) exercise the
 * types they are named for: llama-quantize's recipes mix types per tensor (and fall back for rows it cannot block), so
 * this holds that each file really has tensors of the recipe's main type, and that the engine computes every type in
 * it. Prints the mix, which is where a recipe's fallbacks show.
 */
@Tag("llama-server")
class QuantRecipeTest extends EngineParityFixture {

    @ParameterizedTest(name = "{0} {1} has {2}")
    @CsvSource({
            "WIDE_QWEN3MOE, Q2_K, Q2_K", "WIDE_QWEN3MOE, Q3_K_M, Q3_K",
            "WIDE_DEEPSEEK2, Q2_K, Q2_K", "WIDE_DEEPSEEK2, Q3_K_M, Q3_K",
            "WIDE_QWEN3MOE, IQ4_XS, IQ4_XS", "WIDE_DEEPSEEK2, IQ4_XS, IQ4_XS",
            "WIDE_QWEN3MOE, IQ4_NL, IQ4_NL", "WIDE_DEEPSEEK2, IQ4_NL, IQ4_NL",
            "WIDE_QWEN3MOE, MXFP4_MOE, MXFP4", "WIDE_DEEPSEEK2, MXFP4_MOE, MXFP4",
            "WIDE_QWEN3MOE, IQ2_XXS, IQ2_XXS", "WIDE_DEEPSEEK2, IQ2_XXS, IQ2_XXS",
            "WIDE_QWEN3MOE, IQ2_XS, IQ2_XS", "WIDE_DEEPSEEK2, IQ2_XS, IQ2_XS",
            "WIDE_QWEN3MOE, IQ2_M, IQ2_S", "WIDE_DEEPSEEK2, IQ2_M, IQ2_S",
            "WIDE_QWEN3MOE, IQ3_XXS, IQ3_XXS", "WIDE_DEEPSEEK2, IQ3_XXS, IQ3_XXS",
            "WIDE_QWEN3MOE, IQ3_S, IQ3_S", "WIDE_DEEPSEEK2, IQ3_S, IQ3_S",
            "WIDE_QWEN3MOE, IQ1_S, IQ1_S", "WIDE_DEEPSEEK2, IQ1_S, IQ1_S",
            "WIDE_QWEN3MOE, IQ1_M, IQ1_M", "WIDE_DEEPSEEK2, IQ1_M, IQ1_M"})
    void recipeHasItsTypeAndEveryTypeIsComputable(ParityModels arch, Format format, GgmlType main) {
        Path model = arch.write(format, dir);
        Map<GgmlType, Integer> mix = new TreeMap<>();
        try (GgufFile file = GgufFile.open(model)) {
            for (GgufTensorInfo t : file.tensors()) {
                mix.merge(t.type(), 1, Integer::sum);
            }
        }
        System.out.printf("%s %s: tensor types %s%n", arch, format, mix);
        assertThat(mix).as("%s %s", arch, format).containsKey(main);
        assertThat(mix.keySet()).as("%s %s: every type computable", arch, format).allMatch(GgmlType::computable);
    }
}
