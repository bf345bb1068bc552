package dev.lazarus.backend.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class BackendHealthTest {

    @Test
    void loadingReportsItsProgressAndTheTimeLeftAtItsPaceSoFar() {
        BackendHealth quarter = BackendHealth.loading("loading m (25 %)", 0.25, Duration.ofSeconds(10));
        assertThat(quarter.status()).isEqualTo(BackendHealth.Status.LOADING);
        assertThat(quarter.details()).containsEntry(BackendHealth.PROGRESS, 0.25)
                .containsEntry(BackendHealth.ETA_SECONDS, 30L);
    }

    @Test
    void noEstimateBeforeAnyProgressOrOnceTheMeasuredPartIsDone() {
        assertThat(BackendHealth.loading("d", 0, Duration.ofSeconds(3)).details())
                .containsEntry(BackendHealth.PROGRESS, 0.0).doesNotContainKey(BackendHealth.ETA_SECONDS);
        assertThat(BackendHealth.loading("d", 1, Duration.ofSeconds(3)).details())
                .containsEntry(BackendHealth.PROGRESS, 1.0).doesNotContainKey(BackendHealth.ETA_SECONDS);
    }
}
