package dev.lazarus.gateway.metrics;

import dev.lazarus.gateway.resilience.HealthMonitor;
import dev.lazarus.gateway.routing.BackendRegistry;
import dev.lazarus.gateway.routing.RouteTable;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import tools.jackson.databind.json.JsonMapper;

/**
 * Health contributors ({@code backends}: one per backend; {@code routes}: one line per public
 * model, used by the readiness group), both reading the health monitor's last checks; the
 * metering decorator and the routing metrics.
 */
@Configuration(proxyBeanMethods = false)
class ObservabilityConfiguration {

    @Bean
    CompositeHealthContributor backendsHealthContributor(BackendRegistry backends, HealthMonitor monitor) {
        return CompositeHealthContributor.fromMap(indicators(backends, monitor));
    }

    @Bean
    RoutesHealthIndicator routesHealthIndicator(RouteTable routes, BackendRegistry backends, HealthMonitor monitor) {
        return new RoutesHealthIndicator(routes, indicators(backends, monitor));
    }

    private static Map<String, BackendHealthIndicator> indicators(BackendRegistry backends, HealthMonitor monitor) {
        Map<String, BackendHealthIndicator> indicators = new LinkedHashMap<>();
        backends.all().forEach(b -> indicators.put(b.id(), new BackendHealthIndicator(monitor, b.id())));
        return indicators;
    }

    @Bean
    ActuatorRequestFilter actuatorRequestFilter(JsonMapper json) {
        return new ActuatorRequestFilter(json);
    }

    @Bean
    RoutingMetrics routingMetrics(MeterRegistry registry) {
        return new RoutingMetrics(registry);
    }

    /** Outermost: it sees what the client waits for, including any time a policy decorator adds. */
    @Bean
    @Order(Ordered.HIGHEST_PRECEDENCE)
    MeteringDecorator meteringDecorator(MeterRegistry registry) {
        return new MeteringDecorator(registry);
    }
}
