package dev.lazarus.kt.tokenizer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BpeTokenizerTest {

    private final TestVocabs.Builder vocab = TestVocabs.chatMl("qwen2");
    private final Tokenizer tok = vocab.build();

    private int id(String piece) {
        return tok.tokenId(piece).orElseThrow();
    }

    @Test
    void mergesByRankIntoWholeWords() {
        assertThat(tok.encode("hello world", false, false)).containsExactly(id("hello"), id("Ġworld"));
    }

    @Test
    void lowerRankWinsOverLeftmostPair() {
        Tokenizer t = TestVocabs.byteLevel("gpt2").merge("b", "c").merge("a", "b").build();
        // "b c" has rank 0, so "abc" becomes a + bc, although "a b" is further left
        assertThat(t.encode("abc", false, false)).containsExactly('a', t.tokenId("bc").orElseThrow());
        assertThat(t.encode("ab", false, false)).containsExactly(t.tokenId("ab").orElseThrow());
    }

    @Test
    void unmergeableTextFallsBackToByteTokens() {
        // é is C3 A9: two byte characters, no merge between them
        assertThat(tok.encode("é", false, false)).containsExactly(0xC3, 0xA9);
    }

    @Test
    void controlTokensAreMatchedInTextOnlyWhenParsingSpecials() {
        int[] parsed = tok.encode("<|im_start|>user\nhello<|im_end|>", false, true);
        assertThat(parsed).containsExactly(id("<|im_start|>"), 'u', 's', 'e', 'r', 0x0A, id("hello"), id("<|im_end|>"));
        int[] literal = tok.encode("<|im_start|>", false, false);
        assertThat(literal).doesNotContain(id("<|im_start|>")).contains((int) '<', (int) '|');
        assertThat(tok.decode(literal)).isEqualTo("<|im_start|>");
    }

    @Test
    void userDefinedTokensAreMatchedEvenWithoutParsingSpecials() {
        assertThat(tok.encode("a<tool_call>b", false, false)).containsExactly('a', id("<tool_call>"), 'b');
    }

    @Test
    void longerSpecialTokensAreCutFirst() {
        Tokenizer t = TestVocabs.byteLevel("gpt2")
                .token("<|a|>", TokenType.CONTROL, 0).token("<|a|><|b|>", TokenType.CONTROL, 0).build();
        assertThat(t.encode("x<|a|><|b|><|a|>", false, true))
                .containsExactly('x', t.tokenId("<|a|><|b|>").orElseThrow(), t.tokenId("<|a|>").orElseThrow());
    }

    @Test
    void bosIsAddedPerMetadata() {
        Tokenizer withBos = TestVocabs.chatMl("qwen2").put("tokenizer.ggml.add_bos_token", true)
                .put("tokenizer.ggml.bos_token_id", 256).build();
        assertThat(withBos.addsBos()).isTrue();
        assertThat(withBos.encode("hello", true, false)).containsExactly(256, id("hello"));
        assertThat(withBos.encode("hello", false, false)).containsExactly(id("hello"));
        assertThat(tok.addsBos()).isFalse();
        assertThat(tok.encode("hello", true, false)).containsExactly(id("hello"));
    }

    @Test
    void llama3PreTokenizerAddsBosByDefaultAndTakesWholeWordTokensWithoutMerges() {
        TestVocabs.Builder b = TestVocabs.byteLevel("llama-bpe").token("xyz").token("<|begin_of_text|>", TokenType.CONTROL, 0);
        Tokenizer llama3 = b.put("tokenizer.ggml.bos_token_id", b.id("<|begin_of_text|>")).build();
        assertThat(llama3.encode("xyz", true, false)).containsExactly(b.id("<|begin_of_text|>"), b.id("xyz"));
        Tokenizer gpt2 = TestVocabs.byteLevel("gpt2").token("xyz").build();
        assertThat(gpt2.encode("xyz", true, false)).containsExactly('x', 'y', 'z');
    }

    @Test
    void decodeRoundTripsArbitraryUnicode() {
        String text = "Grüße, 世界! 👋🏽 naïve café\n\tx = 12345; // ok\u00A0done";
        assertThat(tok.decode(tok.encode(text, false, false))).isEqualTo(text);
    }

    @Test
    void controlTokensDecodeToNothingUnlessAskedFor() {
        int[] ids = {id("<|im_start|>"), id("hello"), id("<|im_end|>")};
        assertThat(tok.decode(ids)).isEqualTo("hello");
        assertThat(tok.decode(ids, true)).isEqualTo("<|im_start|>hello<|im_end|>");
        assertThat(tok.tokenBytes(id("Ġworld"))).isEqualTo(" world".getBytes(StandardCharsets.UTF_8));
        assertThat(tok.piece(id("Ġworld"))).isEqualTo("Ġworld");
    }

    @Test
    void endOfGenerationTokensComeFromMetadataAndKnownTexts() {
        assertThat(tok.eos()).isEqualTo(id("<|endoftext|>"));
        assertThat(tok.isEog(id("<|endoftext|>"))).isTrue();
        assertThat(tok.isEog(id("<|im_end|>"))).isTrue();
        assertThat(tok.isEog(id("<|im_start|>"))).isFalse();
        assertThat(tok.isEog(id("hello"))).isFalse();
    }

    @Test
    void encodesLongTextWithoutQuadraticBlowUp() {
        String unit = "The quick brown fox jumps over the lazy dog 1234567890. Grüße! 👋\n";
        String text = unit.repeat(2000);
        int[] ids = tok.encode(text, false, false);
        assertThat(tok.decode(ids)).isEqualTo(text);
        assertThat(tok.encode("x".repeat(50_000), false, false)).hasSize(50_000);
    }

    @Test
    void rejectsBrokenMetadataWithTheKeyInTheMessage() {
        assertThatThrownBy(() -> Tokenizers.fromMetadata(Map.of("tokenizer.ggml.model", "gpt2")))
                .isInstanceOf(TokenizerException.class).hasMessageContaining("tokenizer.ggml.tokens");
        assertThatThrownBy(() -> Tokenizers.fromMetadata(Map.of("tokenizer.ggml.model", "bert")))
                .isInstanceOf(TokenizerException.class).hasMessageContaining("bert");
        assertThatThrownBy(() -> tok.piece(tok.vocabSize())).isInstanceOf(IllegalArgumentException.class);
    }
}
