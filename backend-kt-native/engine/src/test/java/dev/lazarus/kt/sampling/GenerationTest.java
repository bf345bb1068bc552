package dev.lazarus.kt.sampling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.backend.api.openai.Usage;
import dev.lazarus.kt.tokenizer.Tokenizer;
import dev.lazarus.kt.tokenizer.Tokenizers;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class GenerationTest {

    /** Printable ASCII tokens (id = character) plus an end-of-turn token at 128. */
    private static final Tokenizer TOK = tokenizer();

    private static Tokenizer tokenizer() {
        List<Object> tokens = new ArrayList<>();
        List<Object> types = new ArrayList<>();
        for (int i = 0; i < 128; i++) {
            tokens.add(i >= 0x21 && i <= 0x7E ? String.valueOf((char) i) : "<0x%02X>".formatted(i));
            types.add(i >= 0x21 && i <= 0x7E ? 1 : 6);
        }
        tokens.add("<|im_end|>");
        types.add(3);
        tokens.add("Ġ");
        types.add(1);
        tokens.add("<|channel|>"); // 130: a control token that does not end the turn
        types.add(3);
        return Tokenizers.fromMetadata(Map.of("tokenizer.ggml.model", "gpt2", "tokenizer.ggml.pre", "qwen2",
                "tokenizer.ggml.tokens", tokens, "tokenizer.ggml.token_type", types, "tokenizer.ggml.merges", List.of()));
    }

    private static SamplingParams params(int maxTokens, String... stops) {
        return new SamplingParams(0f, 0, 1f, 0f, 1, Penalties.NONE, Map.of(), false, 0, maxTokens, List.of(stops));
    }

    private static String feed(Generation g, String text) {
        StringBuilder out = new StringBuilder();
        for (char c : text.toCharArray()) {
            if (g.finished()) {
                break;
            }
            out.append(g.accept(c));
        }
        return out.toString();
    }

    @Test
    void controlTokensAreNothingUnlessTheChatFormatShowsThem() {
        assertThat(new Generation(TOK, params(-1), 0).accept(130)).isEmpty();
        Generation shown = new Generation(TOK, params(-1), 0, id -> id == 130);
        assertThat(shown.accept(130) + feed(shown, "final")).isEqualTo("<|channel|>final");
        assertThat(shown.accept(128)).as("the end of turn ends it, unwritten").isEmpty();
        assertThat(shown.finished()).isTrue();
    }

    @Test
    void stopStringEndsTheCompletionWithoutBeingEmitted() {
        Generation g = new Generation(TOK, params(-1, "##"), 7);
        assertThat(feed(g, "ab#c##de")).isEqualTo("ab#c");
        assertThat(g.finishReason()).isEqualTo(FinishReason.STOP);
        assertThat(g.usage()).isEqualTo(Usage.of(7, 6));
    }

    @Test
    void maxTokensEndsWithLengthAndReleasesHeldText() {
        Generation g = new Generation(TOK, params(3, "xyz"), 2);
        assertThat(feed(g, "abxyz")).isEqualTo("abx");
        assertThat(g.finishReason()).isEqualTo(FinishReason.LENGTH);
        assertThat(g.finishReason().wireName()).isEqualTo("length");
        assertThat(g.usage().completionTokens()).isEqualTo(3);
        assertThatThrownBy(() -> g.accept('a')).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void endOfTurnTokenStopsAndRendersNothing() {
        Generation g = new Generation(TOK, params(-1), 0);
        assertThat(feed(g, "hi")).isEqualTo("hi");
        assertThat(g.accept(128)).isEmpty();
        assertThat(g.finishReason()).isEqualTo(FinishReason.STOP);
        assertThat(g.finishReason().wireName()).isEqualTo("stop");
        assertThat(g.tokens().toArray()).containsExactly('h', 'i', 128);
    }

    @Test
    void anExternalEndFlushesAndReportsLength() {
        Generation g = new Generation(TOK, params(-1, "ab"), 0);
        assertThat(g.accept('a')).isEmpty();
        assertThat(g.finishForLength()).isEqualTo("a");
        assertThat(g.finishReason()).isEqualTo(FinishReason.LENGTH);
    }
}
