package dev.lazarus.kt.correctness;

import dev.lazarus.kt.correctness.ParityModels.Format;
import dev.lazarus.kt.model.KvCacheType;
import dev.lazarus.kt.model.KvCacheTypes;
import java.nio.file.Path;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The engine with a KV cache of llama-server's {@code -ctk}/{@code -ctv} types continues prompts like llama-server
 * started with the same flags. With {@code -fa off}: every key type with F16 values, and BF16 values (the only other
 * type llama.cpp stores transposed, which {@code -fa off} needs; a quantised V makes it refuse to load); with
 * {@code -fa on} quantised values too, in flash attention's order ({@code TypedFlashKv}); on the
 * tiny llama (grouped-query attention) and the tiny deepseek2 (absorbed MLA: the cache holds one latent row per
 * position whose values are a view of the keys, so llama.cpp refuses different K and V types there, and without flash
 * attention a quantised type altogether). A quantised K is rotated as llama.cpp rotates it by default
 * ({@code KvRotation}). Greedy 64-token continuations token by
 * token, logprobs within {@link GreedyParityTest#TOLERANCE}, on two prompts (the chat template, the long one
 * whose prompt takes the batch kernels): each type's cache changes every score, so a rounding that
 * differs shows within a few tokens.
 */
@Tag("llama-server")
class KvCacheTypeParityTest extends EngineParityFixture {

    private static final Set<String> PROMPTS = Set.of("chat", "long");

    /**
     * {@code -fa off}: every key type with F16 values, BF16 values, and deepseek2 in BF16. {@code -fa on}: quantised
     * values too (each value type once, beside another key type), and deepseek2 in Q8_0.
     */
    static Stream<Arguments> cases() {
        Stream<Arguments> nonFlash = Stream.concat(Stream.of(KvCacheType.values())
                        .filter(k -> k != KvCacheType.F16)
                        .map(k -> Arguments.of(ParityModels.LLAMA, AttentionMode.OFF, k, KvCacheType.F16)),
                Stream.of(Arguments.of(ParityModels.LLAMA, AttentionMode.OFF, KvCacheType.Q8_0, KvCacheType.BF16),
                        Arguments.of(ParityModels.DEEPSEEK2, AttentionMode.OFF, KvCacheType.BF16, KvCacheType.BF16)));
        Stream<Arguments> flash = Stream.of(
                Arguments.of(ParityModels.LLAMA, AttentionMode.ON, KvCacheType.Q8_0, KvCacheType.Q8_0),
                Arguments.of(ParityModels.LLAMA, AttentionMode.ON, KvCacheType.Q4_0, KvCacheType.Q4_1),
                Arguments.of(ParityModels.LLAMA, AttentionMode.ON, KvCacheType.F16, KvCacheType.Q5_0),
                Arguments.of(ParityModels.LLAMA, AttentionMode.ON, KvCacheType.IQ4_NL, KvCacheType.BF16),
                Arguments.of(ParityModels.LLAMA, AttentionMode.ON, KvCacheType.BF16, KvCacheType.Q5_1),
                Arguments.of(ParityModels.LLAMA, AttentionMode.ON, KvCacheType.Q5_1, KvCacheType.IQ4_NL),
                Arguments.of(ParityModels.DEEPSEEK2, AttentionMode.ON, KvCacheType.Q8_0, KvCacheType.Q8_0));
        return Stream.concat(nonFlash, flash);
    }

    @ParameterizedTest(name = "{0} {1} -ctk {2} -ctv {3}")
    @MethodSource("cases")
    void greedyContinuationsMatchLlamaServer(ParityModels arch, AttentionMode mode, KvCacheType k, KvCacheType v) {
        Path model = arch.write(Format.Q8_0, dir);
        KvCacheTypes types = new KvCacheTypes(k, v);
        try (EngineRunner engine = new EngineRunner(model, parallel, null, mode.order(1), types)) {
            GreedyParityTest.assertGreedyContract(engine, model, arch + " Q8_0 " + mode + " " + types,
                    ParityContract.host(), mode, prompt -> PROMPTS.contains(prompt.name()),
                    "-ctk", k.settingName(), "-ctv", v.settingName());
        }
    }
}
