package dev.lazarus.gateway.resilience;

import dev.lazarus.backend.api.Redactor;
import dev.lazarus.gateway.routing.BackendRegistry;
import dev.lazarus.gateway.routing.MidStreamMode;
import dev.lazarus.gateway.routing.RouteTable;
import dev.lazarus.gateway.routing.RoutingListener;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The runtime protections, plugged into the routing seams: breakers and transcripts as backend
 * call decorators, the availability filter after whatever route planner is in place, and
 * mid-stream resume as the stream resumer. The circuit breaker registry is Resilience4j's own
 * (its Spring Boot module also binds its Micrometer metrics and actuator endpoints).
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties({ResilienceProperties.class, HealthProperties.class, AttemptProperties.class})
public class ResilienceConfiguration {

    @Bean
    BackendBreakers backendBreakers(CircuitBreakerRegistry registry, BackendRegistry backends,
            ResilienceProperties properties) {
        return new BackendBreakers(registry, backends, properties);
    }

    @Bean
    BackendStatsRegistry backendStatsRegistry(ResilienceProperties properties) {
        return new BackendStatsRegistry(properties.statsWindow());
    }

    @Bean
    HealthMonitor healthMonitor(BackendRegistry backends, HealthProperties properties, Redactor redactor) {
        return new HealthMonitor(backends, properties, redactor);
    }

    @Bean
    BackendAvailability backendAvailability(HealthMonitor health, BackendBreakers breakers, BackendStatsRegistry stats) {
        return new BackendAvailability(health, breakers, stats);
    }

    @Bean
    CircuitBreakerDecorator circuitBreakerDecorator(BackendBreakers breakers, BackendStatsRegistry stats) {
        return new CircuitBreakerDecorator(breakers, stats);
    }

    @Bean
    SameBackendRetryDecorator sameBackendRetryDecorator(AttemptProperties properties) {
        return new SameBackendRetryDecorator(properties);
    }

    @Bean
    FirstTokenTimeoutDecorator firstTokenTimeoutDecorator(AttemptProperties properties, HealthMonitor health) {
        return new FirstTokenTimeoutDecorator(properties, health::checkNow);
    }

    @Bean
    TranscriptDecorator transcriptDecorator(RouteTable routes, ResilienceProperties properties) {
        return new TranscriptDecorator(modes(routes, properties));
    }

    @Bean
    AvailabilityRouteFilter availabilityRouteFilter(BackendAvailability availability) {
        return new AvailabilityRouteFilter(availability);
    }

    @Bean
    ResumingStreamResumer resumingStreamResumer(RouteTable routes, ResilienceProperties properties,
            ObjectProvider<RoutingListener> listeners) {
        return new ResumingStreamResumer(modes(routes, properties),
                RoutingListener.composite(listeners.orderedStream().toList()));
    }

    /** Public model name → mid-stream mode: the model's own, else {@code lazarus.resilience.mid-stream}. */
    static Function<String, MidStreamMode> modes(RouteTable routes, ResilienceProperties properties) {
        Map<String, MidStreamMode> byModel = new HashMap<>();
        routes.routes().forEach(route -> {
            if (route.midStream() != null) {
                byModel.put(route.name(), route.midStream());
            }
        });
        MidStreamMode fallback = properties.midStream();
        return model -> byModel.getOrDefault(model, fallback);
    }
}
