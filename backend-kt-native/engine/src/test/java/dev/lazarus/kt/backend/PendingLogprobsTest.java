package dev.lazarus.kt.backend;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.sampling.TokenLogprobs;
import java.util.List;
import org.junit.jupiter.api.Test;

class PendingLogprobsTest {

    static TokenLogprobs token(int id) {
        return new TokenLogprobs(id, -id, List.of());
    }

    static List<Integer> ids(List<PendingLogprobs.Scored> scored) {
        return scored.stream().map(s -> s.logprobs().token()).toList();
    }

    @Test
    void anEntryGoesOutWithTheTextThatCompletesItsToken() {
        PendingLogprobs pending = new PendingLogprobs();
        pending.add(token(1), 2); // "ab"
        assertThat(pending.sent("a")).isEmpty();
        pending.add(token(2), 1); // "c"
        List<PendingLogprobs.Scored> out = pending.sent("bc");
        assertThat(ids(out)).containsExactly(1, 2);
        assertThat(out).extracting(PendingLogprobs.Scored::textOffset).containsExactly(0, 2);
    }

    @Test
    void offsetsCountCharactersWhileTokensSplitMultiByteCharacters() {
        PendingLogprobs pending = new PendingLogprobs();
        pending.add(token(1), 2); // "é" (2 bytes)
        pending.add(token(2), 2); // first two bytes of "€" (3 bytes)
        assertThat(pending.sent("é")).extracting(PendingLogprobs.Scored::textOffset).containsExactly(0);
        pending.add(token(3), 2); // last byte of "€" and "x"
        List<PendingLogprobs.Scored> out = pending.sent("€x");
        assertThat(ids(out)).containsExactly(2, 3);
        // token 3 starts inside "€": its offset is where the character ends
        assertThat(out).extracting(PendingLogprobs.Scored::textOffset).containsExactly(1, 2);
    }

    @Test
    void atTheEndTokensSwallowedByAStopStringAreDropped() {
        PendingLogprobs pending = new PendingLogprobs();
        pending.add(token(1), 3); // "abc", of which only "ab" is sent: "c" starts the stop string
        pending.add(token(2), 3); // "END"
        assertThat(pending.sent("ab")).isEmpty();
        assertThat(ids(pending.finish())).containsExactly(1);
        assertThat(pending.finish()).isEmpty();
    }
}
