package dev.lazarus.gateway.resilience;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.WholeAnswer;
import dev.lazarus.backend.api.openai.RawJson;
import dev.lazarus.backend.api.openai.Usage;
import org.junit.jupiter.api.Test;

/** What metering and the breaker learn from a whole (non-streamed) answer. */
class WholeAnswerClockTest {

    private static WholeAnswer answer(Usage usage, long generationNanos) {
        byte[] body = "{}".getBytes();
        return new WholeAnswer(new RawJson(body, 0, body.length, RawJson.noSpans()), usage, generationNanos);
    }

    @Test
    void theServersGenerationTimePlacesTheFirstTokenAndGivesTheSpeed() throws InterruptedException {
        GenerationClock clock = new GenerationClock();
        Thread.sleep(30);
        long gap = clock.onChunk(answer(Usage.of(7, 11), 10_000_000L), ChunkInspector.WHOLE);

        assertThat(gap).isEqualTo(-1);
        assertThat(clock.answeredWhole()).isTrue();
        assertThat(clock.started()).isTrue();
        // the answer came after 30 ms or more, of which the server says 10 ms were generation
        assertThat(clock.ttftNanos()).isGreaterThanOrEqualTo(20_000_000L).isLessThan(clock.elapsedNanos());
        assertThat(clock.completionTokens()).isEqualTo(11);
        assertThat(clock.promptTokens()).isEqualTo(7);
        assertThat(clock.tokensPerSecond()).isEqualTo(1000.0); // 10 tokens after the first in 10 ms
    }

    @Test
    void withoutTheServersTimeTheFirstTokenStaysUnknown() {
        GenerationClock clock = new GenerationClock();
        clock.onChunk(answer(Usage.of(7, 11), -1), ChunkInspector.WHOLE);

        assertThat(clock.answeredWhole()).isTrue();
        assertThat(clock.started()).isFalse();
        assertThat(clock.ttftNanos()).isEqualTo(-1);
        assertThat(clock.tokensPerSecond()).isNaN();
        assertThat(clock.completionTokens()).isEqualTo(11);
    }
}
