package dev.lazarus.kt.tokenizer;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class StreamingDecoderTest {

    private final Tokenizer tok = TestVocabs.sentencePiece().build();

    @Test
    void holdsBackBytesUntilTheCharacterIsComplete() {
        StreamingDecoder decoder = new StreamingDecoder(tok);
        StringBuilder out = new StringBuilder();
        for (byte b : "a👋é".getBytes(StandardCharsets.UTF_8)) {
            String piece = decoder.push(tok.tokenId(String.format("<0x%02X>", b & 0xFF)).orElseThrow());
            out.append(piece);
            if ((b & 0xFF) == 0xF0) {
                assertThat(piece).isEmpty();
                assertThat(decoder.pendingBytes()).isEqualTo(1);
            }
        }
        assertThat(out.toString()).isEqualTo("a👋é");
        assertThat(decoder.pendingBytes()).isZero();
    }

    @Test
    void flushGivesReplacementForAnUnfinishedCharacter() {
        StreamingDecoder decoder = new StreamingDecoder(tok);
        assertThat(decoder.push(new byte[] {'x', (byte) 0xE4, (byte) 0xB8})).isEqualTo("x");
        assertThat(decoder.flush()).isEqualTo("\uFFFD");
        assertThat(decoder.flush()).isEmpty();
    }

    @Test
    void invalidBytesAreNotHeldForever() {
        StreamingDecoder decoder = new StreamingDecoder(tok);
        assertThat(decoder.push(new byte[] {(byte) 0x80})).isEqualTo("\uFFFD");
    }

    @Test
    void controlTokensRenderOnlyWhenAsked() {
        assertThat(new StreamingDecoder(tok).push(2)).isEmpty();
        assertThat(new StreamingDecoder(tok, true).push(2)).isEqualTo("</s>");
    }
}
