package dev.lazarus.kt.parallel;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PhaseProfileTest {

    /** Per call and phase: the opening, the span, busy and idle time over the threads, the mean join delay. */
    @Test
    void theReportAveragesOverCallsAndThreads() {
        PhaseProfile.reset();
        assertThat(PhaseProfile.report("none")).contains("no phased calls");
        for (int call = 0; call < 2; call++) {
            PhaseProfile.call(20_000, 4);
            PhaseProfile.opened(0, 1_000);
            PhaseProfile.opened(1, 3_000);
            PhaseProfile.ended(1, 10_000);
            for (int t = 0; t < 4; t++) {
                PhaseProfile.joined(1, 400 * (t + 1));
                PhaseProfile.chunk(1, 6_000);
            }
        }
        String report = PhaseProfile.report("test");
        assertThat(report).contains("2 calls, 4 threads, wall 20.0 µs/call");
        // phase 1: open 3 µs, span 10 µs, busy 4 × 6 µs over 4 threads, idle 4 µs, joined after 1 µs on average
        assertThat(report).contains("#     1 |     3.0 |    10.0 |       6.0 |       4.0 |     1.0 |   4.0 |    4.0");
        assertThat(report).contains("# sum   |     4.0 |    10.0 |       6.0 |       4.0 |  outside phases 6.0 µs");
        PhaseProfile.reset();
        assertThat(PhaseProfile.report("after reset")).contains("no phased calls");
    }
}
