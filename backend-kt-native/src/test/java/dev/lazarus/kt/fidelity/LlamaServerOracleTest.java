package dev.lazarus.kt.fidelity;

import dev.lazarus.kt.fidelity.LlamaServerOracle.OracleException;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.net.URI;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Reading llama-server's {@code /completion} answer: token ids, the top candidates aligned to them, the bans. */
class LlamaServerOracleTest {

    @Test
    void alignsCandidatesToTokensSkippingThoseThatEndInsideACharacter() {
        // token 7 holds the first bytes of a UTF-8 character: llama-server reports no probabilities for it
        String body = """
                {"tokens": [5, 7, 9],
                 "completion_probabilities": [
                   {"id": 5, "top_logprobs": [{"id": 5, "logprob": -0.1}, {"id": 6, "logprob": -2.5}]},
                   {"id": 9, "top_logprobs": [{"id": 9, "logprob": -0.7}, {"id": 3, "logprob": null}]}],
                 "generation_settings": {"logit_bias": [{"token": 2, "bias": null}, {"token": 4, "bias": 1.5}]}}
                """;

        OracleContinuation c = LlamaServerOracle.parse(body);

        assertThat(c.tokens()).containsExactly(5, 7, 9);
        assertThat(c.top().get(0)).containsExactly(new TokenLogprob(5, -0.1), new TokenLogprob(6, -2.5));
        assertThat(c.top().get(1)).isNull();
        assertThat(c.top().get(2)).containsExactly(new TokenLogprob(9, -0.7),
                new TokenLogprob(3, Double.NEGATIVE_INFINITY));
        assertThat(c.banned()).as("only -inf biases (null) are bans").containsExactly(2);
    }

    @Test
    void probabilitiesThatFollowNoTokenAreAnError() {
        JsonNode probabilities = JsonMapper.builder().build().readTree("""
                [{"id": 5, "top_logprobs": []}, {"id": 8, "top_logprobs": []}]""");
        assertThatThrownBy(() -> LlamaServerOracle.alignTopLogprobs(new int[] {5, 7}, probabilities))
                .isInstanceOf(OracleException.class).hasMessageContaining("do not follow the tokens [5, 7]");
    }

    @Test
    void anAnswerWithoutTokensSaysWhy() {
        assertThatThrownBy(() -> LlamaServerOracle.parse("{\"content\": \"hi\"}"))
                .isInstanceOf(OracleException.class).hasMessageContaining("no \"tokens\"");
        assertThatThrownBy(() -> LlamaServerOracle.parse("<html>"))
                .isInstanceOf(OracleException.class).hasMessageContaining("not JSON");
    }

    @Test
    void asksForGreedyTokensAndRawProbabilitiesOfTokenIds() {
        JsonNode request = JsonMapper.builder().build().readTree(LlamaServerOracle.requestBody(new int[] {1, 2}, 64, 5));

        assertThat(request.path("prompt").toString()).isEqualTo("[1,2]");
        assertThat(request.path("n_predict").asInt()).isEqualTo(64);
        assertThat(request.path("temperature").asInt()).isZero();
        assertThat(request.path("top_k").asInt()).isEqualTo(1);
        assertThat(request.path("samplers").toString()).isEqualTo("[\"top_k\"]");
        assertThat(request.path("n_probs").asInt()).isEqualTo(5);
        assertThat(request.path("post_sampling_probs").asBoolean()).isFalse();
        assertThat(request.path("cache_prompt").asBoolean()).isFalse();
        assertThat(request.path("return_tokens").asBoolean()).isTrue();
        assertThat(request.path("ignore_eos").asBoolean()).isTrue();
    }

    @Test
    void anUnreachableOracleIsAnOracleException() {
        LlamaServerOracle oracle = new LlamaServerOracle(URI.create("http://127.0.0.1:9/"));
        assertThat(oracle.describe()).isEqualTo("http://127.0.0.1:9");
        assertThatThrownBy(oracle::requireHealthy).isInstanceOf(OracleException.class)
                .hasMessageContaining("is llama-server running there?");
    }
}
