package dev.lazarus.gateway.policy.pivot;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Runs the slow-generation rule on a schedule, on one daemon thread, until closed. */
public final class PivotMonitor implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(PivotMonitor.class);

    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().name("lazarus-pivot").daemon().factory());

    public PivotMonitor(SlowGenerationRule rule, Duration interval) {
        long millis = Math.max(1, interval.toMillis());
        scheduler.scheduleAtFixedRate(() -> {
            try {
                rule.check();
            } catch (RuntimeException e) {
                // A failed look must not stop the schedule (a scheduled task that throws is never run again).
                log.warn("slow-generation check failed: {}", e.toString());
            }
        }, millis, millis, TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
    }
}
