package dev.lazarus.kt.placement;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.model.RoutingStats;
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

        RoutingStats loaded = new RoutingStats(3, 4);
        assertThat(RoutingStatsFile.loadInto(file, "m", catalog, loaded)).isTrue();
        assertThat(loaded.counts()).isDeepEqualTo(stats.counts());
        assertThat(loaded.computations(2, 3)).as("computations are this run's only").isZero();
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

        assertThat(RoutingStatsFile.loadInto(file, "m", Catalogs.of(0, 3, 4), new RoutingStats(3, 4))).isFalse();
        assertThat(RoutingStatsFile.loadInto(file, "m", Catalogs.of(1, 3, 8), new RoutingStats(3, 8))).isFalse();
        RoutingStats fresh = new RoutingStats(3, 4);
        fresh.record(1, 1, 2);
        Files.writeString(file, "{ not json");
        assertThat(RoutingStatsFile.loadInto(file, "m", Catalogs.of(1, 3, 4), fresh)).isFalse();
        assertThat(fresh.count(1, 1)).as("left as it was").isEqualTo(2);
        assertThat(RoutingStatsFile.loadInto(null, "m", Catalogs.of(1, 3, 4), fresh)).isFalse();
    }

    @Test
    void savedCountsSeedTheDynamicScore() {
        RoutingStats stats = new RoutingStats(1, 2);
        stats.seed(new long[] {40, 10});
        stats.record(0, 1, 30);
        assertThat(stats.takeWindow()[0]).containsExactly(40 * RoutingStats.DECAY, 10 * RoutingStats.DECAY + 30);
        assertThat(stats.counts()[0]).containsExactly(40, 40);
        assertThat(stats.computations(0, 1)).isEqualTo(1);
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
