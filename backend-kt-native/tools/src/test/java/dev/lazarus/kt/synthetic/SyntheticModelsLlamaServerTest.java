package dev.lazarus.kt.synthetic;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.synthetic.SyntheticModels.Spec;
import dev.lazarus.kt.testsupport.LlamaCpp;
import dev.lazarus.kt.testsupport.LlamaServerProcess;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** Debian's llama.cpp loads every synthetic preset and runs it: tokenizer, chat template and generation. */
@Tag("llama-server")
class SyntheticModelsLlamaServerTest {

    private static final ObjectMapper JSON = JsonMapper.builder().build();
    private static final ByteBpeVocab VOCAB = ByteBpeVocab.standard();

    @TempDir
    static Path dir;

    @BeforeAll
    static void needsLlamaCpp() {
        LlamaCpp.require();
    }

    static Stream<Arguments> models() {
        Spec deepseek = SyntheticModels.tinyDeepseek2();
        SyntheticModels.Mla mla = deepseek.mla();
        return Stream.of(
                Arguments.of(SyntheticModels.tinyLlama()),
                Arguments.of(SyntheticModels.tinyLlama().withWeightType(GgmlType.F16)),
                Arguments.of(SyntheticModels.tinyLlamaMoe().withWeightType(GgmlType.Q8_0)),
                Arguments.of(SyntheticModels.tinyQwen3().withWeightType(GgmlType.BF16)),
                Arguments.of(SyntheticModels.tinyQwen3Moe()),
                Arguments.of(SyntheticModels.tinyQwen3Moe().withWeightType(GgmlType.Q8_0)),
                Arguments.of(deepseek),
                Arguments.of(deepseek.withName("tiny-deepseek2-fused-kv-b").withMla(mla.withSplitKvB(false))),
                Arguments.of(deepseek.withName("tiny-deepseek2-no-q-lora").withMla(
                        new SyntheticModels.Mla(0, mla.kvLoraRank(), mla.qkNopeDim(), mla.qkRopeDim(), mla.vHeadDim(), true))),
                Arguments.of(SyntheticModels.tinyDeepseek32().withWeightType(GgmlType.Q8_0)),
                Arguments.of(SyntheticModels.tinyGlmDsa().withWeightType(GgmlType.Q8_0)),
                Arguments.of(SyntheticModels.tinyGlmDsaSharedIndexers().withWeightType(GgmlType.Q8_0)),
                Arguments.of(SyntheticModels.tinyGlm4Moe()),
                Arguments.of(SyntheticModels.tinyGptOss().withWeightType(GgmlType.Q8_0)),
                Arguments.of(SyntheticModels.tinyMinimaxM2().withWeightType(GgmlType.Q8_0)),
                Arguments.of(SyntheticModels.tinyQwen35Moe().withWeightType(GgmlType.Q8_0)),
                Arguments.of(SyntheticModels.tinyQwen3Next().withWeightType(GgmlType.Q8_0)));
    }

    @ParameterizedTest(name = "{index}: {0}")
    @MethodSource("models")
    void llamaServerLoadsTokenizesTemplatesAndGenerates(Spec spec) {
        Path model = SyntheticModels.write(spec, dir.resolve(spec.name() + "-" + spec.weightType() + ".gguf"));
        try (LlamaServerProcess server = LlamaServerProcess.start(model, "-c", "1024", "--jinja")) {
            assertModelDescribed(server, spec);
            assertTokenizerMatchesVocabulary(server);
            assertChatTemplateRendered(server);
            assertGreedyGenerationIsDeterministic(server);
        }
    }

    @Test
    void llamaQuantizeMakesQ4KMThatLoads() {
        Spec spec = SyntheticModels.tinyQwen3Moe();
        Path f32 = SyntheticModels.write(spec, dir.resolve("q4km-source.gguf"));
        Path q4 = LlamaCpp.quantize(f32, dir.resolve("tiny-qwen3moe-Q4_K_M.gguf"), "Q4_K_M");
        try (LlamaServerProcess server = LlamaServerProcess.start(q4, "-c", "512")) {
            assertGreedyGenerationIsDeterministic(server);
        }
    }

    private static void assertModelDescribed(LlamaServerProcess server, Spec spec) {
        JsonNode props = read(server.get("/props"));
        assertThat(props.path("chat_template").asString()).isEqualTo(ByteBpeVocab.chatTemplate());
        JsonNode meta = read(server.get("/v1/models")).path("data").get(0).path("meta");
        assertThat(meta.path("n_vocab").asInt()).isEqualTo(VOCAB.size());
        assertThat(meta.path("n_embd").asInt()).isEqualTo(spec.dim());
        assertThat(meta.path("n_params").asLong()).isEqualTo(spec.parameterCount());
    }

    private static void assertTokenizerMatchesVocabulary(LlamaServerProcess server) {
        String text = "<|im_start|>user\n the gateway";
        JsonNode tokens = read(server.post("/tokenize",
                "{\"content\":" + quote(text) + ",\"parse_special\":true,\"with_pieces\":true}")).path("tokens");
        List<Integer> ids = new ArrayList<>();
        StringBuilder pieces = new StringBuilder();
        tokens.forEach(t -> {
            ids.add(t.path("id").asInt());
            pieces.append(t.path("piece").asString());
        });
        assertThat(pieces.toString()).isEqualTo(text);
        assertThat(ids.getFirst()).isEqualTo(VOCAB.id(ByteBpeVocab.IM_START).orElseThrow());
        // " the" is among the first merges of the corpus: one token proves the merges were loaded and applied.
        assertThat(ids).contains(VOCAB.id("Ġthe").orElseThrow());
        String detok = read(server.post("/detokenize", "{\"tokens\":" + ids + "}")).path("content").asString();
        assertThat(detok).isEqualTo(text);
    }

    private static void assertChatTemplateRendered(LlamaServerProcess server) {
        String body = """
                {"messages":[
                  {"role":"system","content":"Be brief."},
                  {"role":"user","content":"Weather in Paris?"},
                  {"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function",
                    "function":{"name":"get_weather","arguments":"{\\"city\\":\\"Paris\\"}"}}]},
                  {"role":"tool","tool_call_id":"c1","content":"sunny"},
                  {"role":"user","content":"Thanks"}]}""";
        String prompt = read(server.post("/apply-template", body)).path("prompt").asString();
        assertThat(prompt).isEqualTo("""
                <|im_start|>system
                Be brief.<|im_end|>
                <|im_start|>user
                Weather in Paris?<|im_end|>
                <|im_start|>assistant
                <tool_call>
                {"name": "get_weather", "arguments": {"city": "Paris"}}
                </tool_call><|im_end|>
                <|im_start|>user
                <tool_response>
                sunny
                </tool_response><|im_end|>
                <|im_start|>user
                Thanks<|im_end|>
                <|im_start|>assistant
                """);
    }

    private static void assertGreedyGenerationIsDeterministic(LlamaServerProcess server) {
        String request = """
                {"prompt":"The capital of France is","n_predict":16,"temperature":0,"ignore_eos":true,
                 "cache_prompt":false,"return_tokens":true}""";
        JsonNode first = read(server.post("/completion", request));
        JsonNode second = read(server.post("/completion", request));
        assertThat(first.path("tokens_predicted").asInt()).isEqualTo(16);
        assertThat(first.path("tokens")).hasSize(16);
        assertThat(second.path("tokens")).isEqualTo(first.path("tokens"));
        assertThat(first.path("tokens").valueStream().mapToInt(JsonNode::asInt)).allMatch(id -> id >= 0 && id < VOCAB.size());
    }

    private static JsonNode read(String json) {
        return JSON.readTree(json);
    }

    private static String quote(String s) {
        return JSON.writeValueAsString(s);
    }
}
