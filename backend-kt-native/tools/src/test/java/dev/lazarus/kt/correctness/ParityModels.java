package dev.lazarus.kt.correctness;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.synthetic.ByteBpeVocab;
import dev.lazarus.kt.synthetic.SpmVocab;
import dev.lazarus.kt.synthetic.SyntheticModels;
import dev.lazarus.kt.synthetic.Vocab;
import dev.lazarus.kt.synthetic.SyntheticModels.Spec;
import dev.lazarus.kt.testsupport.ImportanceMatrix;
import dev.lazarus.kt.testsupport.LlamaCpp;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * The generated models the engine is compared on against llama-server: one architecture preset in one
 * weight format. {@code Q4_K_M} (like the other formats without a generated type) is not written by the generator
 * but made by Debian's {@code llama-quantize} from the F32 file, so the K-quant blocks (and the per-tensor type mix
 * of the _M recipe: Q6_K for the output head and some {@code attn_v}/{@code ffn_down}, fallbacks for rows that are
 * not multiples of 256) are exactly what llama.cpp users get.
 */
enum ParityModels {
    LLAMA("llama", SyntheticModels::tinyLlama, Format.GREEDY),
    QWEN3MOE("qwen3moe", SyntheticModels::tinyQwen3Moe, Format.GREEDY),
    DEEPSEEK2("deepseek2", SyntheticModels::tinyDeepseek2, Format.GREEDY),
    /**
     * deepseek2 as older converters wrote it: the fused {@code attn_kv_b} without the {@code *_mla} head sizes, which
     * llama.cpp runs as decompressed multi-head attention (per-head keys and values in the cache); one format, the
     * layout being what it adds.
     */
    DEEPSEEK2_KV_B("deepseek2", ParityModels::fusedKvBDeepseek2, List.of(Format.Q8_0)),
    /** Sparse attention from the 13th position on: the prompts and continuations are longer than its indexer's top-k. */
    DEEPSEEK32("deepseek32", SyntheticModels::tinyDeepseek32, Format.GREEDY),
    /** deepseek32's sparse attention with GLM-5's indexer rope and routing; sparse from the 11th position on. */
    GLM_DSA("glm-dsa", SyntheticModels::tinyGlmDsa, Format.GREEDY),
    /** GLM-5.2's shared indexers ({@code attention.indexer.types}): the middle block attends what the first chose. */
    GLM_DSA_SHARED_INDEXERS("glm-dsa", SyntheticModels::tinyGlmDsaSharedIndexers, List.of(Format.Q8_0)),
    GLM4MOE("glm4moe", SyntheticModels::tinyGlm4Moe, Format.GREEDY),
    GPT_OSS("gpt-oss", SyntheticModels::tinyGptOss, Format.GREEDY),
    /** Gated DeltaNet blocks (recurrent state per sequence) between output-gated full attention. */
    QWEN35MOE("qwen35moe", SyntheticModels::tinyQwen35Moe, Format.GREEDY),
    /** qwen35moe's blocks with plain rope, each key head's value heads consecutive, one beta/alpha projection. */
    QWEN3NEXT("qwen3next", SyntheticModels::tinyQwen3Next, Format.GREEDY),
    /**
     * qwen3next as converters wrote it before llama.cpp split the input projection: one {@code ssm_in} for queries,
     * keys, values and z, per key head (the GGUFs most users hold); one format, the layout being what it adds.
     */
    QWEN3NEXT_SSM_IN("qwen3next", ParityModels::fusedInputQwen3Next, List.of(Format.Q8_0)),
    /** The QK-norm over the whole projection, across heads. */
    MINIMAX_M2("minimax-m2", SyntheticModels::tinyMinimaxM2, Format.GREEDY),
    /** Other dimensions than the tiny shapes (see {@link SyntheticModels#wideQwen3Moe()}), in the formats users run. */
    WIDE_GLM4MOE("glm4moe", SyntheticModels::wideGlm4Moe, List.of(Format.Q8_0, Format.Q4_K_M)),
    WIDE_GPT_OSS("gpt-oss", SyntheticModels::wideGptOss, List.of(Format.Q8_0, Format.Q4_K_M, Format.MXFP4_MOE)),
    WIDE_LLAMA("llama", SyntheticModels::wideLlama, List.of(Format.Q8_0)),
    /**
     * A llama2.c-like model ({@link SyntheticModels#oddLlama()}): SentencePiece vocabulary of 512, FFN width 172, whose
     * {@code ffn_down} rows no vector width divides (and which Q8_0 keeps in F16). Its byte tokens ({@code <0xNN>})
     * make llama-server hold text back (no probabilities for those steps, {@code LlamaServerOracle.alignTopLogprobs});
     * {@link HiddenStateParityTest} also runs it.
     */
    ODD_LLAMA("llama", SyntheticModels::oddLlama, SpmVocab::llama2c512, List.of(Format.F32, Format.Q8_0)),
    WIDE_QWEN3MOE("qwen3moe", SyntheticModels::wideQwen3Moe, Format.LOW_BIT),
    WIDE_DEEPSEEK2("deepseek2", SyntheticModels::wideDeepseek2, Format.LOW_BIT),
    /** The operators' DeepSeek-V3.2 runs Q3_K_M; an indexer head of 128 as the real one. */
    WIDE_DEEPSEEK32("deepseek32", SyntheticModels::wideDeepseek32, List.of(Format.Q8_0, Format.Q4_K_M, Format.Q3_K_M)),
    WIDE_GLM_DSA("glm-dsa", SyntheticModels::wideGlmDsa, List.of(Format.Q8_0, Format.Q4_K_M)),
    /** The real value head size (128), four value heads to a key head, a DeltaNet-to-attention interval of 4. */
    WIDE_QWEN35MOE("qwen35moe", SyntheticModels::wideQwen35Moe, List.of(Format.Q8_0, Format.Q4_K_M)),
    /** The real value head size (128), two value heads to each of two key heads, an interval of 4. */
    WIDE_QWEN3NEXT("qwen3next", SyntheticModels::wideQwen3Next, List.of(Format.Q8_0, Format.Q4_K_M)),
    WIDE_MINIMAX_M2("minimax-m2", SyntheticModels::wideMinimaxM2, List.of(Format.Q8_0, Format.Q4_K_M));

    /**
     * The weight formats compared; those without a generated type are llama-quantize's recipes of that name.
     * {@link GreedyParityTest} runs {@link #GREEDY}; {@link HiddenStateParityTest} adds the others on one
     * architecture each.
     */
    enum Format {
        F32(GgmlType.F32), F16(GgmlType.F16), Q8_0(GgmlType.Q8_0), Q4_K_M(null),
        Q5_K_M(null), BF16(GgmlType.BF16), Q4_0(null), Q4_1(null), Q5_0(null), Q5_1(null),
        /** llama-quantize's low-bit recipes (the operators' DeepSeek-R1 baseline is Q3_K_M): Q2_K and Q3_K tensors mixed with Q4_K-Q6_K. */
        Q2_K(null), Q3_K_M(null),
        /** llama-quantize's non-linear 4-bit types (no importance matrix needed). */
        IQ4_XS(null), IQ4_NL(null),
        /** MXFP4 routed experts (what gpt-oss ships), the other tensors as llama-quantize's recipe leaves them. */
        MXFP4_MOE(null),
        /**
         * llama-quantize's grid I-quant recipes, made with an importance matrix ({@link ImportanceMatrix}; the IQ1,
         * IQ2 and IQ3_XXS types require one): IQ2_M is the recipe of IQ2_S tensors (llama-quantize's IQ2_S recipe
         * makes IQ2_XS ones).
         */
        IQ2_XXS(null, true), IQ2_XS(null, true), IQ2_M(null, true), IQ3_XXS(null, true), IQ3_S(null, true),
        IQ1_S(null, true), IQ1_M(null, true);

        static final List<Format> GREEDY = List.of(F32, F16, Q8_0, Q4_K_M);
        static final List<Format> LOW_BIT = List.of(F16, Q8_0, Q4_K_M, Q2_K, Q3_K_M, IQ4_XS, IQ4_NL, MXFP4_MOE,
                IQ2_XXS, IQ2_XS, IQ2_M, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M);

        private final GgmlType generated;
        private final boolean imatrix;

        Format(GgmlType generated) {
            this(generated, false);
        }

        Format(GgmlType generated, boolean imatrix) {
            this.generated = generated;
            this.imatrix = imatrix;
        }
    }

    private final String arch;
    private final Supplier<Spec> preset;
    private final List<Format> greedyFormats;
    private final Supplier<Vocab> vocab;

    ParityModels(String arch, Supplier<Spec> preset, List<Format> greedyFormats) {
        this(arch, preset, ByteBpeVocab::standard, greedyFormats);
    }

    ParityModels(String arch, Supplier<Spec> preset, Supplier<Vocab> vocab, List<Format> greedyFormats) {
        this.arch = arch;
        this.preset = preset;
        this.vocab = vocab;
        this.greedyFormats = greedyFormats;
    }

    private static Spec fusedKvBDeepseek2() {
        Spec split = SyntheticModels.tinyDeepseek2();
        return split.withName("tiny-deepseek2-kv-b").withMla(split.mla().withSplitKvB(false));
    }

    private static Spec fusedInputQwen3Next() {
        Spec split = SyntheticModels.tinyQwen3Next();
        return split.withName("tiny-qwen3next-ssm-in").withDeltaNet(split.deltaNet().withFusedInput());
    }

    String arch() {
        return arch;
    }

    /** The formats {@link GreedyParityTest} and {@link HiddenStateParityTest} compare this model in. */
    List<Format> greedyFormats() {
        return greedyFormats;
    }

    /** Writes (once per directory) the model file of this architecture in {@code format} and returns it. */
    Path write(Format format, Path dir) {
        Path target = dir.resolve(name().toLowerCase(Locale.ROOT) + "-" + format.name().toLowerCase(Locale.ROOT) + ".gguf");
        if (Files.isRegularFile(target)) {
            return target;
        }
        if (format.generated != null) {
            return SyntheticModels.write(preset.get().withWeightType(format.generated), vocab.get(), target);
        }
        Path f32 = write(Format.F32, dir);
        Path imatrix = format.imatrix
                ? ImportanceMatrix.write(f32, dir.resolve(name().toLowerCase(Locale.ROOT) + "-imatrix.dat")) : null;
        return LlamaCpp.quantize(f32, target, format.name(), imatrix);
    }
}
