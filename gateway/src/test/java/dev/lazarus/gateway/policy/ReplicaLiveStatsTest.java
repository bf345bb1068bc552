package dev.lazarus.gateway.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How the replicas' live figures add up for the rules that judge a candidate for all of them. */
class ReplicaLiveStatsTest {

    private static final Instant T = Instant.parse("2026-11-26T09:00:00Z");

    @Test
    void callsAddUpAndRatesAreWeightedByCalls() {
        BackendLiveStats.Snapshot busy = new BackendLiveStats.Snapshot(12.0, Duration.ofMillis(400),
                Duration.ofMillis(900), 0.0, 30, T);
        BackendLiveStats.Snapshot slow = new BackendLiveStats.Snapshot(4.0, Duration.ofMillis(1_200),
                Duration.ofMillis(2_500), 0.5, 10, T.plusSeconds(1));

        BackendLiveStats.Snapshot all = ReplicaLiveStats.merge(List.of(busy, slow));

        assertThat(all.calls()).isEqualTo(40);
        assertThat(all.tokensPerSecond()).isCloseTo((12.0 * 30 + 4.0 * 10) / 40, within(1e-9)); // 10 tok/s
        assertThat(all.errorRate()).isCloseTo(0.125, within(1e-9));
        assertThat(all.ttftP50()).isEqualTo(Duration.ofMillis(600));
        assertThat(all.ttftP95()).as("the worst replica's tail").isEqualTo(Duration.ofMillis(2_500));
        assertThat(all.at()).isEqualTo(T.plusSeconds(1));
    }

    @Test
    void aReplicaWithoutJudgedCallsDoesNotDragTheSpeedToZero() {
        BackendLiveStats.Snapshot judged = new BackendLiveStats.Snapshot(11.0, null, null, 0.0, 5, T);
        BackendLiveStats.Snapshot unjudged = new BackendLiveStats.Snapshot(Double.NaN, null, null, 1.0, 5, T);

        BackendLiveStats.Snapshot all = ReplicaLiveStats.merge(List.of(judged, unjudged));

        assertThat(all.tokensPerSecond()).isEqualTo(11.0);
        assertThat(all.errorRate()).isEqualTo(0.5);
        assertThat(all.ttftP50()).isNull();
        assertThat(ReplicaLiveStats.merge(List.of(unjudged)).tokensPerSecond()).isNaN();
    }
}
