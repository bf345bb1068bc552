package dev.lazarus.kt.backend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.openai.Completion;
import dev.lazarus.backend.api.openai.CompletionAggregator;
import dev.lazarus.backend.api.openai.CompletionRequest;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.databind.json.JsonMapper;

/** Legacy {@code /v1/completions} on the engine: prompts, echo, logprobs, what is refused. */
class KtNativeCompletionsTest {

    static final JsonMapper JSON = JsonMapper.builder().build();
    static final String PROMPT = "Once upon a time";

    static KtNativeBackend backend;

    @BeforeAll
    static void start() throws Exception {
        backend = EmbeddedModel.start(Map.of());
    }

    @AfterAll
    static void stop() {
        backend.close();
    }

    /** A greedy, plain-text request (as a client would send it) with these fields added. */
    static CompletionRequest request(String fields) {
        String bias = JSON.writeValueAsString(EmbeddedModel.noControlTokens());
        return JSON.readValue("{\"model\": \"tiny\", \"temperature\": 0, \"logit_bias\": " + bias + ", " + fields + "}",
                CompletionRequest.class);
    }

    static List<Completion> run(CompletionRequest request) {
        return backend.completion(request).collectList().block(Duration.ofMinutes(1));
    }

    static Completion aggregate(List<Completion> chunks) {
        CompletionAggregator aggregator = new CompletionAggregator();
        chunks.forEach(aggregator::add);
        return aggregator.result();
    }

    @Test
    void stringPromptCompletesWithUsageAndFinishReason() {
        List<Completion> chunks = run(request("\"prompt\": \"" + PROMPT + "\", \"max_tokens\": 6"));
        assertThat(chunks.getLast().choices()).isEmpty();
        Completion result = aggregate(chunks);
        assertThat(result.object()).isEqualTo("text_completion");
        assertThat(result.id()).startsWith("cmpl-");
        assertThat(result.choices().getFirst().text()).isNotEmpty();
        assertThat(result.choices().getFirst().finishReason()).isEqualTo("length");
        int promptTokens = EmbeddedModel.TOKENIZER.encode(PROMPT, true, true).length;
        assertThat(result.usage().promptTokens()).isEqualTo(promptTokens);
        assertThat(result.usage().completionTokens()).isEqualTo(6);
    }

    @Test
    void tokenIdPromptIsTheSameAsItsText() {
        int[] ids = EmbeddedModel.TOKENIZER.encode(PROMPT, true, true);
        String fromText = aggregate(run(request("\"prompt\": \"" + PROMPT + "\", \"max_tokens\": 6")))
                .choices().getFirst().text();
        String fromIds = aggregate(run(request("\"prompt\": " + JSON.writeValueAsString(ids) + ", \"max_tokens\": 6")))
                .choices().getFirst().text();
        assertThat(fromIds).isEqualTo(fromText);
    }

    @Test
    void echoSendsThePromptFirst() {
        String plain = aggregate(run(request("\"prompt\": \"" + PROMPT + "\", \"max_tokens\": 5")))
                .choices().getFirst().text();
        List<Completion> chunks = run(request("\"prompt\": \"" + PROMPT + "\", \"max_tokens\": 5, \"echo\": true"));
        assertThat(chunks.getFirst().choices().getFirst().text()).isEqualTo(PROMPT);
        assertThat(aggregate(chunks).choices().getFirst().text()).isEqualTo(PROMPT + plain);
    }

    @Test
    void logprobsGiveParallelArraysWithTheTopAlternatives() {
        Completion result = aggregate(run(request("\"prompt\": \"" + PROMPT + "\", \"max_tokens\": 8, \"logprobs\": 3")));
        Completion.LegacyLogprobs lp = result.choices().getFirst().logprobs();
        assertThat(lp.tokens()).hasSize(8).hasSameSizeAs(lp.tokenLogprobs()).hasSameSizeAs(lp.topLogprobs())
                .hasSameSizeAs(lp.textOffset());
        assertThat(lp.tokenLogprobs()).allSatisfy(l -> assertThat(l).isLessThanOrEqualTo(0.0));
        // alternatives with the same text merge, so up to 3; the chosen (greedy) token is the best of them
        IntStream.range(0, 8).forEach(i -> {
            assertThat(lp.topLogprobs().get(i)).hasSizeBetween(1, 3);
            assertThat(lp.topLogprobs().get(i).values().iterator().next()).isEqualTo(lp.tokenLogprobs().get(i));
        });
        assertThat(lp.textOffset().getFirst()).isZero();
        assertThat(lp.textOffset()).isSorted();
        assertThat(String.join("", lp.tokens())).isEqualTo(result.choices().getFirst().text());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "suffix       | \"prompt\": \"def f(\", \"suffix\": \"return 1\"",
            "echo         | \"prompt\": \"Hi\", \"echo\": true, \"logprobs\": 2",
            "prompt       | \"prompt\": [\"one\", \"two\"]",
            "prompt       | \"prompt\": [1, 999999999]",
            "prompt       | \"prompt\": \"\"",
            "logprobs     | \"prompt\": \"Hi\", \"logprobs\": 6",
            "best_of      | \"prompt\": \"Hi\", \"best_of\": 3",
            "temperature  | \"prompt\": \"Hi\", \"temperature\": -1"})
    void unsupportedOrInvalidFieldsAreRefusedNamingTheParameter(String param, String fields) {
        var flux = backend.completion(request(fields));
        assertThatThrownBy(flux::blockLast).isInstanceOfSatisfying(BackendException.class, e -> {
            assertThat(e.kind()).isEqualTo(BackendErrorKind.INVALID_REQUEST);
            assertThat(e.param()).isEqualTo(param);
        });
    }
}
