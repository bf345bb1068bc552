package dev.lazarus.kt.sampling;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class StopMatcherTest {

    @Test
    void aStopStringSplitOverPiecesIsNeverEmitted() {
        StopMatcher m = new StopMatcher(List.of("STOP"));
        assertThat(m.push("Hello ST")).isEqualTo("Hello ");
        assertThat(m.stopped()).isFalse();
        assertThat(m.push("OP world")).isEmpty();
        assertThat(m.stopped()).isTrue();
        assertThat(m.push("more")).isEmpty();
    }

    @Test
    void heldTextIsReleasedWhenItTurnsOutNotToBeAStop() {
        StopMatcher m = new StopMatcher(List.of("</end>", "\n\n"));
        assertThat(m.push("a </e")).isEqualTo("a ");
        assertThat(m.push("x>")).isEqualTo("</ex>");
        assertThat(m.push("b\n")).isEqualTo("b");
        assertThat(m.flush()).isEqualTo("\n");
    }

    @Test
    void theEarliestStopWinsAndTextBeforeItIsKept() {
        StopMatcher m = new StopMatcher(List.of("world", "lo"));
        assertThat(m.push("hello world")).isEqualTo("hel");
        assertThat(m.stopped()).isTrue();
    }

    @Test
    void withoutStopsEverythingPassesStraightThrough() {
        StopMatcher m = new StopMatcher(List.of());
        assertThat(m.push("abc")).isEqualTo("abc");
        assertThat(m.flush()).isEmpty();
    }
}
