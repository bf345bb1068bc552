package dev.lazarus.gateway.policy;

import dev.lazarus.gateway.resilience.BackendStats;
import dev.lazarus.gateway.resilience.BackendStatsRegistry;
import dev.lazarus.gateway.resilience.HealthMonitor;
import dev.lazarus.gateway.resilience.HealthResult;
import java.time.Clock;
import java.util.Optional;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The policy's two read-only views of live traffic, served by the resilience package: its stats
 * window (for the slow-generation rule and the admin API) and its health monitor's last results.
 */
@Configuration(proxyBeanMethods = false)
class ResilienceAdapters {

    @Bean
    BackendLiveStats backendLiveStats(BackendStatsRegistry registry) {
        Clock clock = Clock.systemUTC();
        return id -> {
            BackendStats stats = registry.stats(id);
            if (stats.calls() == 0) {
                return Optional.empty();
            }
            return Optional.of(new BackendLiveStats.Snapshot(stats.tokensPerSecond(), stats.ttftP50(),
                    stats.ttftP95(), stats.errorRate(), stats.calls(), clock.instant()));
        };
    }

    @Bean
    BackendHealthView backendHealthView(HealthMonitor monitor) {
        return id -> monitor.latest(id).map(HealthResult::health);
    }
}
