package dev.lazarus.kt.sampling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.backend.api.openai.CompletionRequest;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SamplingParamsTest {

    private static ChatCompletionRequest.Builder chat() {
        return ChatCompletionRequest.builder().model("m").messages(List.of(ChatMessage.user("hi")));
    }

    @Test
    void unsetFieldsTakeLlamaServerDefaults() {
        SamplingParams p = SamplingParams.from(chat().build());
        assertThat(p.temperature()).isEqualTo(0.8f);
        assertThat(p.topK()).isEqualTo(40);
        assertThat(p.topP()).isEqualTo(0.95f);
        assertThat(p.minP()).isEqualTo(0.05f);
        assertThat(p.maxTokens()).isEqualTo(-1);
        assertThat(p.logprobs()).isFalse();
        assertThat(p.stop()).isEmpty();
    }

    @Test
    void readsOpenAiFieldsAndLlamaCppExtras() {
        SamplingParams p = SamplingParams.from(chat().temperature(0.0).topP(0.5).seed(9L).presencePenalty(0.5)
                .frequencyPenalty(-1.0).logitBias(Map.of("42", -100.0)).logprobs(true).topLogprobs(5)
                .maxCompletionTokens(16).maxTokens(99).stop(List.of("\n")).extra("top_k", 7).extra("min_p", 0.1).build());
        assertThat(p.isGreedy()).isTrue();
        assertThat(p.topP()).isEqualTo(0.5f);
        assertThat(p.seed()).isEqualTo(9L);
        assertThat(p.penalties()).isEqualTo(new Penalties(Penalties.DEFAULT_LAST_N, 1f, -1f, 0.5f));
        assertThat(p.logitBias()).containsEntry(42, -100f);
        assertThat(p.topLogprobs()).isEqualTo(5);
        assertThat(p.maxTokens()).isEqualTo(16);
        assertThat(p.stop()).containsExactly("\n");
        assertThat(p.topK()).isEqualTo(7);
        assertThat(p.minP()).isEqualTo(0.1f);
    }

    @Test
    void readsLlamaCppPenaltyFields() {
        assertThat(SamplingParams.from(chat().extra("repeat_penalty", 1.1).extra("repeat_last_n", -1).build())
                .penalties()).isEqualTo(new Penalties(-1, 1.1f, 0f, 0f));
        assertThat(SamplingParams.from(chat().extra("penalty_last_n", 0).build()).penalties().lastN()).isZero();
        assertThat(SamplingParams.from(chat().build()).penalties()).isEqualTo(Penalties.NONE);
        assertThat(Penalties.NONE.active()).isFalse();
        assertThat(new Penalties(0, 1.5f, 1f, 1f).active()).as("a window of 0 turns them off").isFalse();
    }

    @Test
    void completionRequestLogprobsIsTheNumberOfAlternatives() {
        CompletionRequest r = new CompletionRequest("m", "hi", null, 5, null, null, null, null, null, 3, null, List.of("x"),
                null, null, null, null, 1L, null, null);
        SamplingParams p = SamplingParams.from(r);
        assertThat(p.logprobs()).isTrue();
        assertThat(p.topLogprobs()).isEqualTo(3);
        assertThat(p.maxTokens()).isEqualTo(5);
        assertThat(p.stop()).containsExactly("x");
    }

    @ParameterizedTest
    @CsvSource({"temperature", "top_p", "top_k", "min_p", "presence_penalty", "frequency_penalty", "n", "top_logprobs",
            "logit_bias", "max_tokens", "max_completion_tokens", "stop", "repeat_penalty", "repeat_last_n",
            "penalty_last_n"})
    void outOfRangeValuesAreRejectedNamingTheParameter(String param) {
        UnaryOperator<ChatCompletionRequest.Builder> bad = switch (param) {
            case "temperature" -> b -> b.temperature(2.5);
            case "top_p" -> b -> b.topP(0.0);
            case "top_k" -> b -> b.extra("top_k", -1);
            case "min_p" -> b -> b.extra("min_p", 1.5);
            case "presence_penalty" -> b -> b.presencePenalty(3.0);
            case "frequency_penalty" -> b -> b.frequencyPenalty(-2.5);
            case "n" -> b -> b.n(2);
            case "top_logprobs" -> b -> b.topLogprobs(2);
            case "logit_bias" -> b -> b.logitBias(Map.of("abc", 1.0));
            case "max_tokens" -> b -> b.maxTokens(0);
            case "max_completion_tokens" -> b -> b.maxCompletionTokens(-3);
            case "stop" -> b -> b.stop(List.of("a", "b", "c", "d", "e"));
            case "repeat_penalty" -> b -> b.extra("repeat_penalty", 0);
            case "repeat_last_n" -> b -> b.extra("repeat_last_n", -2);
            case "penalty_last_n" -> b -> b.extra("penalty_last_n", 1.5);
            default -> throw new IllegalArgumentException(param);
        };
        assertThatThrownBy(() -> SamplingParams.from(bad.apply(chat()).build()))
                .isInstanceOfSatisfying(BackendException.class, e -> {
                    assertThat(e.kind()).isEqualTo(BackendErrorKind.INVALID_REQUEST);
                    assertThat(e.param()).isEqualTo(param);
                });
    }

    @Test
    void aNonNumericExtraIsRejected() {
        assertThatThrownBy(() -> SamplingParams.from(chat().extra("top_k", "many").build()))
                .isInstanceOfSatisfying(BackendException.class, e -> assertThat(e.param()).isEqualTo("top_k"));
    }
}
