package dev.lazarus.gateway.metrics;

import dev.lazarus.gateway.config.LazarusProperties;
import dev.lazarus.gateway.policy.PolicyStore;
import dev.lazarus.gateway.resilience.HealthMonitor;
import dev.lazarus.gateway.routing.BackendRegistry;
import dev.lazarus.gateway.routing.RouteTable;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import tools.jackson.databind.json.JsonMapper;

/**
 * Health contributors ({@code backends}: one per backend; {@code routes}: one line per public
 * model, used by the readiness group), both reading the health monitor's last checks;
 * {@code policyStore}: whether the policy store is reachable; the
 * metering decorator, the routing metrics and the start-up summary line.
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
    PolicyStoreHealthIndicator policyStoreHealthIndicator(PolicyStore store) {
        return new PolicyStoreHealthIndicator(store);
    }

    @Bean
    StartupSummary startupSummary(BackendRegistry backends, HealthMonitor monitor) {
        return new StartupSummary(backends, monitor, Duration.ofSeconds(60));
    }

    /** The start-up line, once the server listens: {@link StartupSummary} waits for the backends from there. */
    @Bean
    ApplicationListener<ApplicationReadyEvent> startupSummaryOnReady(StartupSummary summary,
            LazarusProperties properties) {
        return event -> {
            Environment env = event.getApplicationContext().getEnvironment();
            String token = env.getProperty("lazarus.admin.token"); // read here: metrics does not depend on admin
            summary.access(env.getProperty("server.address"), properties.security().apiKeys().size(),
                    token != null && !token.isBlank());
            summary.logWhenSettled(StartupSummary.url(env.getProperty("server.address"),
                    env.getProperty("local.server.port")));
        };
    }

    @Bean
    ActuatorRequestFilter actuatorRequestFilter(JsonMapper json) {
        return new ActuatorRequestFilter(json);
    }

    @Bean
    RoutingMetrics routingMetrics(MeterRegistry registry) {
        return new RoutingMetrics(registry);
    }

    @Bean
    MeteringDecorator meteringDecorator(MeterRegistry registry) {
        return new MeteringDecorator(registry);
    }
}
