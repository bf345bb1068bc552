package dev.lazarus.kt.fidelity;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** When llama-server holds generated text back: a lead byte among the last four without its sequence's length. */
class HeldBackTextTest {

    private static boolean heldBackAfter(int... bytes) {
        HeldBackText text = new HeldBackText();
        for (int b : bytes) {
            text.append(new byte[] {(byte) b});
        }
        return text.heldBack();
    }

    @Test
    void holdsBackWhileALeadByteLacksItsLengthWhateverFollowsIt() {
        assertThat(heldBackAfter()).isFalse();
        assertThat(heldBackAfter('a')).isFalse();
        assertThat(heldBackAfter(0xDA)).isTrue();
        assertThat(heldBackAfter(0xDA, 't')).as("two bytes from a 2-byte lead").isFalse();
        assertThat(heldBackAfter(0xE5)).isTrue();
        assertThat(heldBackAfter(0xE5, 'i')).as("an ASCII byte does not end the 3-byte sequence early").isTrue();
        assertThat(heldBackAfter(0xE5, 'i', 'i')).isFalse();
        assertThat(heldBackAfter(0xE2, 0x82, 0xAC)).as("€").isFalse();
        assertThat(heldBackAfter(0xF0, 0x9F, 0x98)).isTrue();
        assertThat(heldBackAfter(0xF0, 0x9F, 0x98, 0x80)).as("😀").isFalse();
        assertThat(heldBackAfter('x', 'y', 'z', 0xF0, 0x9F, 0x98, 0x80, 'a')).isFalse();
        assertThat(heldBackAfter(0xC3, 0xA9, 0xE2)).as("é then a lead byte").isTrue();
    }

    @Test
    void looksAtTheLastFourBytesAcrossPieces() {
        HeldBackText text = new HeldBackText();
        text.append(new byte[] {'a', 'b', 'c', 'd', 'e', (byte) 0xF0});
        assertThat(text.heldBack()).isTrue();
        text.append(new byte[] {'x', 'y'});
        assertThat(text.heldBack()).isTrue();
        text.append(new byte[] {'z'});
        assertThat(text.heldBack()).isFalse();
    }
}
