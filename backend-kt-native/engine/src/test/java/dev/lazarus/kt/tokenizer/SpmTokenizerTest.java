package dev.lazarus.kt.tokenizer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class SpmTokenizerTest {

    private final Tokenizer tok = TestVocabs.sentencePiece().build();

    private int id(String piece) {
        return tok.tokenId(piece).orElseThrow();
    }

    @Test
    void addsBosAndALeadingSpaceThenMergesByScore() {
        assertThat(tok.bos()).isEqualTo(1);
        assertThat(tok.eos()).isEqualTo(2);
        assertThat(tok.encode("hello", true, false)).containsExactly(1, id("▁hello"));
    }

    @Test
    void aTokenIsOnlyReachedThroughTokensOnTheWay() {
        // "▁world" exists but "▁worl" does not, so merging stops at ▁wor + l + d
        assertThat(tok.encode("world", false, false)).containsExactly(id("▁wor"), id("l"), id("d"));
    }

    @Test
    void unknownCharactersFallBackToByteTokens() {
        // é = C3 A9; "▁" is a token of its own
        assertThat(tok.encode("é", false, false)).containsExactly(id("▁"), id("<0xC3>"), id("<0xA9>"));
        assertThat(tok.decode(tok.encode("é hello", false, false))).isEqualTo(" é hello");
    }

    @Test
    void withoutByteTokensAnUnknownCharacterIsRefusedNotSpelledWithUnk() {
        Tokenizer noBytes = TestVocabs.sentencePiece(false).build();
        assertThat(noBytes.encode("hello", false, false)).containsExactly(noBytes.tokenId("▁hello").orElseThrow());
        assertThatThrownBy(() -> noBytes.encode("hello é", false, false))
                .isInstanceOf(UnknownCharacterException.class).hasMessageContaining("U+00E9 'é'");
    }

    @Test
    void spaceIsPrefixedAgainAfterASpecialToken() {
        int[] ids = tok.encode("hello</s>hello", false, true);
        assertThat(ids).containsExactly(id("▁hello"), 2, id("▁hello"));
        assertThat(tok.decode(ids)).isEqualTo(" hello hello");
        assertThat(tok.decode(ids, true)).isEqualTo(" hello</s> hello");
    }

    @Test
    void noSpacePrefixWhenMetadataSaysSo() {
        Tokenizer plain = TestVocabs.sentencePiece().put("tokenizer.ggml.add_space_prefix", false).build();
        assertThat(plain.encode("hello", false, false)).containsExactly(id("hello"));
    }

    @Test
    void byteTokensDecodeToTheirByte() {
        assertThat(tok.tokenBytes(id("<0x0A>"))).containsExactly(0x0A);
        assertThat(tok.isEog(2)).isTrue();
        assertThat(tok.tokenType(0)).isEqualTo(TokenType.UNKNOWN);
    }
}
