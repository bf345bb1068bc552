package dev.lazarus.kt.placement;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RoutingStatsTest {

    @TempDir
    Path dir;

    @Test
    void savedCountsComeBackAfterARestartAndKeepCounting() {
        ExpertCatalog catalog = Catalogs.of(1, 3, 4);
        RoutingStats stats = new RoutingStats(3, 4);
        stats.record(0, 1, 5);
        stats.record(2, 3, 7);
        stats.record(2, 3, 1);
        Path file = dir.resolve("stats/routing.json");
        RoutingStatsFile.save(file, "m", catalog, stats);

        RoutingStats loaded = RoutingStatsFile.loadOrEmpty(file, "m", catalog);
        assertThat(loaded.counts()).isDeepEqualTo(stats.counts());
        assertThat(loaded.count(2, 3)).isEqualTo(8);
        loaded.record(2, 3, 2);
        assertThat(loaded.count(2, 3)).isEqualTo(10);
    }

    @Test
    void countsOfAnotherExpertLayoutAreIgnored() throws Exception {
        RoutingStats stats = new RoutingStats(3, 4);
        stats.record(1, 1, 9);
        Path file = dir.resolve("routing.json");
        RoutingStatsFile.save(file, "m", Catalogs.of(1, 3, 4), stats);

        assertThat(RoutingStatsFile.loadOrEmpty(file, "m", Catalogs.of(0, 3, 4)).count(1, 1)).isZero();
        assertThat(RoutingStatsFile.loadOrEmpty(file, "m", Catalogs.of(1, 3, 8)).count(1, 1)).isZero();
        Files.writeString(file, "{ not json");
        assertThat(RoutingStatsFile.loadOrEmpty(file, "m", Catalogs.of(1, 3, 4)).count(1, 1)).isZero();
    }

    @Test
    void theDynamicWindowDecaysOldTrafficBehindNewTraffic() {
        RoutingStats stats = new RoutingStats(1, 2);
        stats.record(0, 0, 100);
        assertThat(stats.takeWindow()[0]).containsExactly(100, 0);
        stats.record(0, 1, 60);
        double[] second = stats.takeWindow()[0];
        assertThat(second[0]).isEqualTo(100 * RoutingStats.DECAY);
        assertThat(second[1]).isEqualTo(60);
        assertThat(second[1]).isGreaterThan(second[0]);
    }
}
