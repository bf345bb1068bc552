package dev.lazarus.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;
import tools.jackson.core.StreamReadConstraints;
import tools.jackson.core.TokenStreamFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The common chat request read in one streaming pass (issue 13): the same request data-binding
 * reads, with the body kept to be sent on as it came; every other shape left to data-binding.
 */
class ChatRequestReaderTest {

    private static final JsonMapper STRICT = StrictScalars.of(JsonMapper.builder().build());
    private static final TokenStreamFactory LIMITED = STRICT.tokenStreamFactory().rebuild()
            .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(8).maxTokenCount(200).build())
            .build();
    private final RawBodyReader reader = new RawBodyReader(LIMITED, STRICT.readerFor(Object.class));

    private ChatCompletionRequest read(String body) {
        return reader.read(body.getBytes(StandardCharsets.UTF_8), new ChatRequestFields());
    }

    private static ChatCompletionRequest bound(String body) {
        return STRICT.readValue(body, ChatCompletionRequest.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"Say hello.\"}],\"max_tokens\":64}",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"stream\":true}",
            " {\n \"messages\" : [ {\"role\":\"system\",\"content\":\"be \\\"brief\\\" \\u00e9\"},"
                    + " {\"role\":\"user\",\"name\":\"ann\",\"content\":\"\"} , {\"role\":\"assistant\"} ] ,"
                    + " \"model\" : \"m\\u0021\" } \n",
            "{\"model\":\"m\",\"messages\":[],\"temperature\":1,\"top_p\":0.5,\"presence_penalty\":-1.5,"
                    + "\"frequency_penalty\":2,\"n\":1,\"max_completion_tokens\":9,\"top_logprobs\":3,\"logprobs\":true,"
                    + "\"seed\":12345678901,\"user\":\"u\",\"parallel_tool_calls\":false,\"stop\":\"\\n\"}",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"stop\":[\"a\",\"b\"],"
                    + "\"stream\":true,\"stream_options\":{\"include_usage\":false}}",
            "{\"model\":\"m\",\"stream_options\":{}}",
            // unknown fields as data-binding keeps them: llama.cpp's extras, any shape
            "{\"model\":\"m\",\"top_k\":40,\"min_p\":0.05,\"cache_prompt\":true,\"grammar\":\"root ::= x\","
                    + "\"big\":123456789012345678901234567890,\"samplers\":[\"top_k\",{\"a\":[1,2.5,null]}],\"n_probs\":0}",
            // what the validator refuses is still read: the validator answers it
            "{\"model\":\"\",\"messages\":[{\"role\":\"robot\"}],\"temperature\":9,\"n\":3,\"max_tokens\":0}"})
    void readsWhatDataBindingReads(String body) {
        ChatCompletionRequest fast = read(body);

        assertThat(fast).isNotNull().isEqualTo(bound(body));
        assertThat(fast.extra()).isEqualTo(bound(body).extra());
        assertThat(fast.raw()).isNotNull();
        // sent on as it came
        assertThat(new String(fast.raw().write(fast.extra(), STRICT::writeValueAsBytes), StandardCharsets.UTF_8))
                .isEqualTo(body);
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "{\"model\":null,\"messages\":[]}",
            "{\"model\":\"m\",\"stream\":null}",
            "{\"model\":\"m\",\"top_k\":null}",
            "{\"model\":\"m\",\"model\":\"n\"}",
            "{\"model\":\"m\",\"top_k\":1,\"top_k\":2}",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}]}",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"tool\",\"content\":\"r\",\"tool_call_id\":\"c1\"}]}",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"a\",\"content\":\"b\"}]}",
            "{\"model\":\"m\",\"messages\":[null]}",
            "{\"model\":\"m\",\"messages\":{}}",
            "{\"model\":\"m\",\"tools\":[]}",
            "{\"model\":\"m\",\"tool_choice\":\"auto\"}",
            "{\"model\":\"m\",\"response_format\":{\"type\":\"json_object\"}}",
            "{\"model\":\"m\",\"logit_bias\":{}}",
            "{\"model\":\"m\",\"max_tokens\":\"5\"}",
            "{\"model\":\"m\",\"max_tokens\":1.0}",
            "{\"model\":\"m\",\"max_tokens\":1e2}",
            "{\"model\":\"m\",\"max_tokens\":99999999999}",
            "{\"model\":\"m\",\"seed\":123456789012345678901234567890}",
            "{\"model\":\"m\",\"temperature\":\"1\"}",
            "{\"model\":\"m\",\"stream\":1}",
            "{\"model\":5}",
            "{\"model\":\"m\",\"user\":5}",
            "{\"model\":\"m\",\"stop\":[\"a\",null]}",
            "{\"model\":\"m\",\"stream_options\":{\"include_usage\":true,\"x\":1}}",
            "{\"model\":\"m\"} {}",
            "{\"model\":\"m\"",
            "{\"messages\":[]}",
            "[{\"model\":\"m\"}]",
            "\uFEFF{\"model\":\"m\"}",
            "{\"model\":\"m\",\"deep\":[[[[[[[[[[1]]]]]]]]]]}"})
    void leavesEveryOtherShapeToDataBinding(String body) {
        assertThat(read(body)).isNull();
    }

    @Test
    void aBodyInUtf16IsLeftToDataBinding() {
        assertThat(reader.read("{\"model\":\"m\"}".getBytes(StandardCharsets.UTF_16LE), new ChatRequestFields())).isNull();
    }

    @Test
    void theModelIsWrittenOverAndTheStreamFieldsAppended() {
        String body = "{ \"model\" : \"m\", \"messages\":[{\"role\":\"user\",\"content\":\"hi\"}], \"top_k\":7 }";
        ChatCompletionRequest request = read(body);

        assertThat(request.withModel("m")).isSameAs(request);
        ChatCompletionRequest upstream = request.withModel("qwen \"3\"").asUsageStream();
        byte[] sent = upstream.raw().write(upstream.extra(), STRICT::writeValueAsBytes);

        assertThat(new String(sent, StandardCharsets.UTF_8)).isEqualTo("{ \"model\" : \"qwen \\\"3\\\"\", \"messages\":"
                + "[{\"role\":\"user\",\"content\":\"hi\"}], \"top_k\":7 ,\"stream\":true,"
                + "\"stream_options\":{\"include_usage\":true}}");
        assertThat(STRICT.readTree(sent)).isEqualTo(STRICT.valueToTree(upstream));
    }

    @Test
    void fieldsABackendAddsAreAppendedAndAChangedOneDropsTheBytes() {
        ChatCompletionRequest request = read("{\"model\":\"m\",\"stream\":true,\"top_k\":7}").asUsageStream();
        request.extra().put("timings_per_token", true);
        request.extra().put("samplers", java.util.List.of("min_p"));

        byte[] sent = request.raw().write(request.extra(), STRICT::writeValueAsBytes);
        JsonNode tree = STRICT.readTree(sent);
        assertThat(tree).isEqualTo(STRICT.valueToTree(request));
        assertThat(new String(sent, StandardCharsets.UTF_8)).startsWith("{\"model\":\"m\",\"stream\":true,\"top_k\":7,");

        Map<String, Object> changed = new LinkedHashMap<>(request.extra());
        changed.put("top_k", 8);
        assertThat(request.raw().write(changed, STRICT::writeValueAsBytes)).isNull();
        Map<String, Object> removed = new LinkedHashMap<>();
        assertThat(request.raw().write(removed, STRICT::writeValueAsBytes)).isNull();
    }

    @Test
    void aBodyThatSaysOtherwiseIsWrittenAgainWhenStreamed() {
        assertThat(read("{\"model\":\"m\",\"stream\":false}").asUsageStream().raw()).isNull();
        assertThat(read("{\"model\":\"m\",\"stream\":true,\"stream_options\":{\"include_usage\":false}}")
                .asUsageStream().raw()).isNull();
        ChatCompletionRequest asked = read("{\"model\":\"m\",\"stream\":true,\"stream_options\":{\"include_usage\":true}}");
        ChatCompletionRequest streamed = asked.asUsageStream();
        assertThat(streamed.raw().write(streamed.extra(), STRICT::writeValueAsBytes))
                .isEqualTo("{\"model\":\"m\",\"stream\":true,\"stream_options\":{\"include_usage\":true}}"
                        .getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void anyOtherChangeDropsTheBytes() {
        ChatCompletionRequest request = read("{\"model\":\"m\",\"messages\":[]}");
        assertThat(request.withMessages(java.util.List.of()).raw()).isNull();
        assertThat(request.toBuilder().build().raw()).isNull();
    }
}
