package dev.lazarus.gateway.resilience;

import dev.lazarus.backend.api.Redactor;
import dev.lazarus.gateway.config.LazarusProperties;
import dev.lazarus.gateway.routing.BackendRegistry;
import dev.lazarus.gateway.routing.RoutingListener;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;

/**
 * The runtime protections, plugged into the routing seams: breakers and transcripts as backend
 * call decorators, the availability filter after whatever route planner is in place, and
 * mid-stream resume as the stream resumer. The circuit breaker registry is Resilience4j's own
 * (its Spring Boot module also binds its Micrometer metrics and actuator endpoints).
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties({ResilienceProperties.class, HealthProperties.class, AttemptProperties.class})
public class ResilienceConfiguration {

    /**
     * Metering (outermost), then same-backend retries (each try one call for the breaker), the
     * breaker, the first-token limit (a call it ends counts as the breaker's failure), the transcript.
     */
    public static final int RETRY_ORDER = 50;
    public static final int BREAKER_ORDER = 100;
    public static final int FIRST_TOKEN_ORDER = 150;
    public static final int TRANSCRIPT_ORDER = 200;
    public static final int AVAILABILITY_FILTER_ORDER = 100;

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
    @Order(BREAKER_ORDER)
    CircuitBreakerDecorator circuitBreakerDecorator(BackendBreakers breakers, BackendStatsRegistry stats) {
        return new CircuitBreakerDecorator(breakers, stats);
    }

    @Bean
    @Order(RETRY_ORDER)
    SameBackendRetryDecorator sameBackendRetryDecorator(AttemptProperties properties) {
        return new SameBackendRetryDecorator(properties);
    }

    @Bean
    @Order(FIRST_TOKEN_ORDER)
    FirstTokenTimeoutDecorator firstTokenTimeoutDecorator(AttemptProperties properties) {
        return new FirstTokenTimeoutDecorator(properties);
    }

    @Bean
    @Order(TRANSCRIPT_ORDER)
    TranscriptDecorator transcriptDecorator(LazarusProperties lazarus, ResilienceProperties properties) {
        return new TranscriptDecorator(modes(lazarus, properties));
    }

    @Bean
    @Order(AVAILABILITY_FILTER_ORDER)
    AvailabilityRouteFilter availabilityRouteFilter(BackendAvailability availability) {
        return new AvailabilityRouteFilter(availability);
    }

    @Bean
    ResumingStreamResumer resumingStreamResumer(LazarusProperties lazarus, ResilienceProperties properties,
            ObjectProvider<RoutingListener> listeners) {
        return new ResumingStreamResumer(modes(lazarus, properties),
                RoutingListener.composite(listeners.orderedStream().toList()));
    }

    /** Public model name → mid-stream mode: the model's own, else {@code lazarus.resilience.mid-stream}. */
    static Function<String, MidStreamMode> modes(LazarusProperties lazarus, ResilienceProperties properties) {
        Map<String, MidStreamMode> byModel = new HashMap<>();
        lazarus.models().forEach(m -> {
            if (m.midStream() != null) {
                byModel.put(m.name(), m.midStream());
            }
        });
        MidStreamMode fallback = properties.midStream();
        return model -> byModel.getOrDefault(model, fallback);
    }
}
