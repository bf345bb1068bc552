package dev.lazarus.kt.fidelity;

import dev.lazarus.kt.fidelity.LlamaServerOracle.OracleException;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Reading llama-server's {@code /completion} answer: token ids, the top candidates aligned to them, the bans. */
class LlamaServerOracleTest {

    /** Token ids 221 {@code <0xDA>}, 400 "to", 232 {@code <0xE5>}, 108 "i" of {@code SpmVocab.llama2c512}. */
    private static final Map<Integer, byte[]> PIECES = Map.of(221, new byte[] {(byte) 0xDA},
            400, "to".getBytes(StandardCharsets.UTF_8), 232, new byte[] {(byte) 0xE5}, 108, new byte[] {'i'});

    private static List<byte[]> pieces(int[] tokens) {
        return Arrays.stream(tokens).mapToObj(PIECES::get).toList();
    }

    @Test
    void alignsEntriesToTheTokensThatReleaseHeldBackText() {
        // llama-server's answer for the json prompt on the llama2.c-like model (ParityModels.ODD_LLAMA), cut to
        // 7 tokens: <0xDA> waits for "to"; <0xE5> then "i" still look like a cut-off 3-byte character, so the
        // first "i" gets no entry either and the second "i" sends "\xE5ii" with its own probabilities
        String body = """
                {"tokens": [221, 400, 232, 108, 108, 108, 108],
                 "completion_probabilities": [
                   {"id": 400, "token": "\uFFFDto", "bytes": [218, 116, 111], "logprob": -0.9532,
                    "top_logprobs": [{"id": 400, "token": "to", "bytes": [116, 111], "logprob": -0.9532},
                                     {"id": 230, "token": "", "bytes": [], "logprob": -2.0884}]},
                   {"id": 108, "token": "\uFFFDii", "bytes": [229, 105, 105], "logprob": -0.7168,
                    "top_logprobs": [{"id": 108, "token": "i", "bytes": [105], "logprob": -0.7168},
                                     {"id": 25, "token": "\\u0016", "bytes": [22], "logprob": -2.5688}]},
                   {"id": 108, "token": "i", "bytes": [105], "logprob": -0.6414,
                    "top_logprobs": [{"id": 108, "token": "i", "bytes": [105], "logprob": -0.6414}]},
                   {"id": 108, "token": "i", "bytes": [105], "logprob": -0.7095,
                    "top_logprobs": [{"id": 108, "token": "i", "bytes": [105], "logprob": -0.7095},
                                     {"id": 28, "token": "\\u0019", "bytes": [25], "logprob": null}]}],
                 "generation_settings": {"logit_bias": [{"token": 2, "bias": null}, {"token": 4, "bias": 1.5}]}}
                """;

        OracleContinuation c = LlamaServerOracle.parse(body, LlamaServerOracleTest::pieces);

        assertThat(c.tokens()).containsExactly(221, 400, 232, 108, 108, 108, 108);
        assertThat(c.top().get(0)).isNull();
        assertThat(c.top().get(1)).containsExactly(new TokenLogprob(400, -0.9532), new TokenLogprob(230, -2.0884));
        assertThat(c.top().get(2)).isNull();
        assertThat(c.top().get(3)).as("held back after <0xE5>, though its id is the next entry's").isNull();
        assertThat(c.top().get(4)).containsExactly(new TokenLogprob(108, -0.7168), new TokenLogprob(25, -2.5688));
        assertThat(c.top().get(5)).containsExactly(new TokenLogprob(108, -0.6414));
        assertThat(c.top().get(6)).containsExactly(new TokenLogprob(108, -0.7095),
                new TokenLogprob(28, Double.NEGATIVE_INFINITY));
        assertThat(c.banned()).as("only -inf biases (null) are bans").containsExactly(2);
    }

    @Test
    void asksForPiecesOnlyWhenSomeTokenHasNoEntry() {
        String body = """
                {"tokens": [5, 9], "completion_probabilities": [
                   {"id": 5, "top_logprobs": [{"id": 5, "logprob": -0.1}]},
                   {"id": 9, "top_logprobs": [{"id": 9, "logprob": -0.7}]}]}
                """;

        OracleContinuation c = LlamaServerOracle.parse(body, tokens -> {
            throw new AssertionError("asked for pieces");
        });

        assertThat(c.top()).containsExactly(List.of(new TokenLogprob(5, -0.1)), List.of(new TokenLogprob(9, -0.7)));
    }

    @Test
    void readsPiecesAsStringsOrBytes() {
        // llama-server's /tokenize with_pieces answer: an array of bytes where the piece is not valid UTF-8
        List<byte[]> pieces = LlamaServerOracle.parsePieces(new int[] {400, 232},
                "{\"tokens\":[{\"id\":400,\"piece\":\"to\"},{\"id\":232,\"piece\":[229]}]}");

        assertThat(pieces).containsExactly("to".getBytes(StandardCharsets.UTF_8), new byte[] {(byte) 0xE5});
        assertThatThrownBy(() -> LlamaServerOracle.parsePieces(new int[] {400, 5},
                "{\"tokens\":[{\"id\":400,\"piece\":\"to\"}]}")).isInstanceOf(OracleException.class);
    }

    @Test
    void probabilitiesThatFollowNoTokenAreAnError() {
        JsonNode probabilities = JsonMapper.builder().build().readTree("""
                [{"id": 5, "top_logprobs": []}, {"id": 8, "top_logprobs": []}]""");
        assertThatThrownBy(() -> LlamaServerOracle.alignTopLogprobs(new int[] {5, 7}, null, probabilities))
                .isInstanceOf(OracleException.class).hasMessageContaining("do not follow the tokens [5, 7] at step 1");
        // a token whose text is released must have the next entry
        assertThatThrownBy(() -> LlamaServerOracle.alignTopLogprobs(new int[] {400, 108},
                pieces(new int[] {400, 108}), probabilities)).isInstanceOf(OracleException.class);
    }

    @Test
    void anAnswerWithoutTokensSaysWhy() {
        assertThatThrownBy(() -> LlamaServerOracle.parse("{\"content\": \"hi\"}", LlamaServerOracleTest::pieces))
                .isInstanceOf(OracleException.class).hasMessageContaining("no \"tokens\"");
        assertThatThrownBy(() -> LlamaServerOracle.parse("<html>", LlamaServerOracleTest::pieces))
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
