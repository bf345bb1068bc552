package dev.lazarus.gateway.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** One listener on the registry's breakers tells every subscriber of each opening, with the rates that caused it. */
class BreakerOpeningsTest {

    @Test
    void everySubscriberHearsOfEveryOpeningOfEveryBreakerButNoneAnOperatorForced() {
        CircuitBreakerRegistry registry = CircuitBreakerRegistry.of(CircuitBreakerConfig.custom()
                .slidingWindowSize(2).minimumNumberOfCalls(2).failureRateThreshold(50).build());
        registry.circuitBreaker("before");
        List<BreakerOpenings.Opening> first = new CopyOnWriteArrayList<>();
        List<String> second = new CopyOnWriteArrayList<>();
        List<Runnable> tasks = new CopyOnWriteArrayList<>();
        new BreakerOpenings(registry, tasks::add).subscribe(first::add).subscribe(o -> second.add(o.backendId()));
        CircuitBreaker after = registry.circuitBreaker("after"); // created after: followed too

        for (int i = 0; i < 2; i++) {
            after.onError(0, TimeUnit.MILLISECONDS, new IllegalStateException("500"));
        }
        registry.circuitBreaker("before").transitionToOpenState();
        registry.circuitBreaker("before").transitionToForcedOpenState(); // an operator's doing
        assertThat(first).as("nothing runs on the breaker's thread").isEmpty();
        tasks.forEach(Runnable::run);

        assertThat(first).containsExactly(new BreakerOpenings.Opening("after", 100f, 0f),
                new BreakerOpenings.Opening("before", -1f, -1f));
        assertThat(second).containsExactly("after", "before");
        assertThat(tasks).as("one task per subscriber and opening").hasSize(4);
    }
}
