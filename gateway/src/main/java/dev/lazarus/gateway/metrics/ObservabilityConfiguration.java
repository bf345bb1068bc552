package dev.lazarus.gateway.metrics;

import dev.lazarus.gateway.routing.BackendRegistry;
import dev.lazarus.gateway.routing.RouteTable;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.health.contributor.CompositeReactiveHealthContributor;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;

/**
 * Health contributors ({@code backends}: one per backend; {@code routes}: one line per public
 * model, used by the readiness group) and the metering decorator.
 */
@Configuration(proxyBeanMethods = false)
class ObservabilityConfiguration {

    private static final Duration HEALTH_TIMEOUT = Duration.ofSeconds(5);

    @Bean
    CompositeReactiveHealthContributor backendsHealthContributor(BackendRegistry backends) {
        return CompositeReactiveHealthContributor.fromMap(indicators(backends));
    }

    @Bean
    RoutesHealthIndicator routesHealthIndicator(RouteTable routes, BackendRegistry backends) {
        return new RoutesHealthIndicator(routes, indicators(backends));
    }

    private static Map<String, BackendHealthIndicator> indicators(BackendRegistry backends) {
        Map<String, BackendHealthIndicator> indicators = new LinkedHashMap<>();
        backends.all().forEach(b -> indicators.put(b.id(), new BackendHealthIndicator(b, HEALTH_TIMEOUT)));
        return indicators;
    }

    /** Outermost: it sees what the client waits for, including any time a policy decorator adds. */
    @Bean
    @Order(Ordered.HIGHEST_PRECEDENCE)
    MeteringDecorator meteringDecorator(MeterRegistry registry) {
        return new MeteringDecorator(registry);
    }
}
