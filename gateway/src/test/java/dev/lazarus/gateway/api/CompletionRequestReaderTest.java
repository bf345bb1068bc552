package dev.lazarus.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.openai.CompletionRequest;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import tools.jackson.core.StreamReadConstraints;
import tools.jackson.core.TokenStreamFactory;
import tools.jackson.databind.json.JsonMapper;

/**
 * The common legacy completion request read in one streaming pass (issue 13), as the chat request
 * is ({@link ChatRequestReaderTest}): the same request data-binding reads, with the body kept to be
 * sent on as it came; every other shape left to data-binding.
 */
class CompletionRequestReaderTest {

    private static final JsonMapper STRICT = StrictScalars.of(JsonMapper.builder().build());
    private static final TokenStreamFactory LIMITED = STRICT.tokenStreamFactory().rebuild()
            .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(8).maxTokenCount(200).build())
            .build();
    private final RawBodyReader reader = new RawBodyReader(LIMITED, STRICT.readerFor(Object.class));

    private CompletionRequest read(String body) {
        return reader.read(body.getBytes(StandardCharsets.UTF_8), new CompletionRequestFields());
    }

    private static CompletionRequest bound(String body) {
        return STRICT.readValue(body, CompletionRequest.class);
    }

    private static String sent(CompletionRequest request) {
        return new String(request.raw().write(request.extra(), STRICT::writeValueAsBytes), StandardCharsets.UTF_8);
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "{\"model\":\"m\",\"prompt\":\"Say hello.\",\"max_tokens\":64}",
            " {\n \"prompt\" : [ \"a \\\"b\\\" \\u00e9\" , \"c\" ] , \"model\" : \"m\\u0021\" } \n",
            "{\"model\":\"m\",\"prompt\":[1, 2,-3, 2147483647]}",
            "{\"model\":\"m\",\"prompt\":[[1,2],[],[3]]}",
            "{\"model\":\"m\",\"prompt\":\"x\",\"suffix\":\"y\",\"temperature\":1,\"top_p\":0.50,\"presence_penalty\":-1.5,"
                    + "\"frequency_penalty\":2e0,\"n\":1,\"best_of\":1,\"logprobs\":2,\"echo\":false,"
                    + "\"seed\":12345678901,\"user\":\"u\",\"stop\":\"\\n\"}",
            "{\"model\":\"m\",\"prompt\":\"x\",\"stop\":[\"a\",\"b\"],\"stream\":true,"
                    + "\"stream_options\":{\"include_usage\":false}}",
            "{\"model\":\"m\",\"stream_options\":{}}",
            // unknown fields as data-binding keeps them: llama.cpp's extras, any shape
            "{\"model\":\"m\",\"prompt\":\"x\",\"top_k\":40,\"min_p\":0.05,\"cache_prompt\":true,\"grammar\":\"root ::= x\","
                    + "\"big\":123456789012345678901234567890,\"samplers\":[\"top_k\",{\"a\":[1,2.5,null]}],\"n_probs\":0}",
            // what the validator refuses is still read: the validator answers it
            "{\"model\":\"\",\"temperature\":9,\"n\":3,\"max_tokens\":0,\"logprobs\":9}"})
    void readsWhatDataBindingReads(String body) {
        CompletionRequest fast = read(body);

        assertThat(fast).isNotNull().isEqualTo(bound(body));
        assertThat(fast.prompt()).isEqualTo(bound(body).prompt());
        assertThat(fast.extra()).isEqualTo(bound(body).extra());
        assertThat(sent(fast)).isEqualTo(body); // sent on as it came
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "{\"model\":null,\"prompt\":\"x\"}",
            "{\"model\":\"m\",\"prompt\":null}",
            "{\"model\":\"m\",\"stream\":null}",
            "{\"model\":\"m\",\"top_k\":null}",
            "{\"model\":\"m\",\"model\":\"n\"}",
            "{\"model\":\"m\",\"prompt\":\"a\",\"prompt\":\"b\"}",
            "{\"model\":\"m\",\"prompt\":[]}",
            "{\"model\":\"m\",\"prompt\":[\"a\",1]}",
            "{\"model\":\"m\",\"prompt\":[1,\"a\"]}",
            "{\"model\":\"m\",\"prompt\":[1,2.5]}",
            "{\"model\":\"m\",\"prompt\":[1,99999999999]}",
            "{\"model\":\"m\",\"prompt\":[[1],2]}",
            "{\"model\":\"m\",\"prompt\":[[1,\"a\"]]}",
            "{\"model\":\"m\",\"prompt\":[null]}",
            "{\"model\":\"m\",\"prompt\":{\"text\":\"x\"}}",
            "{\"model\":\"m\",\"prompt\":5}",
            "{\"model\":\"m\",\"logit_bias\":{}}",
            "{\"model\":\"m\",\"max_tokens\":\"5\"}",
            "{\"model\":\"m\",\"max_tokens\":1.0}",
            "{\"model\":\"m\",\"logprobs\":true}",
            "{\"model\":\"m\",\"echo\":1}",
            "{\"model\":\"m\",\"suffix\":5}",
            "{\"model\":\"m\",\"best_of\":99999999999}",
            "{\"model\":\"m\",\"seed\":123456789012345678901234567890}",
            "{\"model\":\"m\",\"temperature\":\"1\"}",
            "{\"model\":\"m\",\"stop\":[\"a\",null]}",
            "{\"model\":\"m\",\"stream_options\":{\"include_usage\":true,\"x\":1}}",
            "{\"model\":\"m\"} {}",
            "{\"model\":\"m\"",
            "{\"prompt\":\"x\"}",
            "[{\"model\":\"m\"}]",
            "\uFEFF{\"model\":\"m\"}",
            "{\"model\":\"m\",\"prompt\":[[[[[[[[[[1]]]]]]]]]]}"})
    void leavesEveryOtherShapeToDataBinding(String body) {
        assertThat(read(body)).isNull();
    }

    @Test
    void theModelIsWrittenOverAndTheStreamFieldsAppended() {
        String body = "{ \"model\" : \"m\", \"prompt\":[1,2], \"top_k\":7, \"temperature\":1.0E0 }";
        CompletionRequest request = read(body);

        assertThat(request.withModel("m")).isSameAs(request);
        CompletionRequest upstream = request.withModel("qwen \"3\"").asUsageStream();

        assertThat(sent(upstream)).isEqualTo("{ \"model\" : \"qwen \\\"3\\\"\", \"prompt\":[1,2], \"top_k\":7, "
                + "\"temperature\":1.0E0 ,\"stream\":true,\"stream_options\":{\"include_usage\":true}}");
        assertThat(STRICT.readTree(sent(upstream))).isEqualTo(STRICT.valueToTree(upstream));
    }

    @Test
    void fieldsABackendAddsAreAppended() {
        CompletionRequest request = read("{\"model\":\"m\",\"prompt\":\"x\",\"stream\":true,\"top_k\":7}").asUsageStream();
        request.extra().put("timings_per_token", true);

        assertThat(sent(request)).isEqualTo("{\"model\":\"m\",\"prompt\":\"x\",\"stream\":true,\"top_k\":7,"
                + "\"stream_options\":{\"include_usage\":true},\"timings_per_token\":true}");
    }

    @Test
    void aBodyThatSaysOtherwiseOrAChangedRequestIsWrittenAgain() {
        assertThat(read("{\"model\":\"m\",\"prompt\":\"x\",\"stream\":false}").asUsageStream().raw()).isNull();
        assertThat(read("{\"model\":\"m\",\"stream\":true,\"stream_options\":{\"include_usage\":false}}")
                .asUsageStream().raw()).isNull();
        CompletionRequest r = read("{\"model\":\"m\",\"prompt\":\"x\"}");
        CompletionRequest resumed = new CompletionRequest(r.model(), "x and more", r.suffix(), r.maxTokens(),
                r.temperature(), r.topP(), r.n(), r.stream(), r.streamOptions(), r.logprobs(), r.echo(), r.stop(),
                r.presencePenalty(), r.frequencyPenalty(), r.bestOf(), r.logitBias(), r.seed(), r.user(), r.extra());
        assertThat(resumed.raw()).isNull();
        assertThat(r.withModel(null).raw()).isNull();
        assertThat(r.withModel("n").prompt()).isEqualTo("x");
        assertThat(r.withModel("n").asUsageStream().raw()).isNotNull();
    }
}
