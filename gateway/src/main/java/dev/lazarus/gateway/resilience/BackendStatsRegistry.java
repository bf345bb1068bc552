package dev.lazarus.gateway.resilience;

import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Live figures per backend (generation speed, time to first token, error rate) over a recent
 * window, fed by every finished backend call and read by the admin API and the rollback policy.
 * Each backend keeps its last {@value #CAPACITY} calls in a ring of primitive arrays; reading
 * copies what is in the window, which is cheap at admin-request rates.
 */
public final class BackendStatsRegistry {

    static final int CAPACITY = 512;

    private final Duration window;
    private final LongSupplier nanoClock;
    private final Map<String, Ring> rings = new ConcurrentHashMap<>();

    public BackendStatsRegistry(Duration window) {
        this(window, System::nanoTime);
    }

    BackendStatsRegistry(Duration window, LongSupplier nanoClock) {
        this.window = window;
        this.nanoClock = nanoClock;
    }

    /** A call that ended normally; {@code ttftNanos} -1 when it produced no token, {@code tokensPerSecond} NaN when not judged. */
    public void success(String backendId, long ttftNanos, double tokensPerSecond) {
        ring(backendId).add(nanoClock.getAsLong(), false, ttftNanos, tokensPerSecond);
    }

    /** A call that failed in a way that counts against the backend. */
    public void failure(String backendId, long ttftNanos) {
        ring(backendId).add(nanoClock.getAsLong(), true, ttftNanos, Double.NaN);
    }

    public BackendStats stats(String backendId) {
        Ring ring = rings.get(backendId);
        return ring == null ? new BackendStats(window, 0, 0, 0, Double.NaN, null, null)
                : ring.stats(nanoClock.getAsLong() - window.toNanos(), window);
    }

    private Ring ring(String backendId) {
        return rings.computeIfAbsent(backendId, id -> new Ring());
    }

    private static final class Ring {
        private final long[] at = new long[CAPACITY];
        private final long[] ttft = new long[CAPACITY];
        private final double[] tps = new double[CAPACITY];
        private final boolean[] failed = new boolean[CAPACITY];
        private int next;
        private int size;

        synchronized void add(long now, boolean failure, long ttftNanos, double tokensPerSecond) {
            at[next] = now;
            failed[next] = failure;
            ttft[next] = ttftNanos;
            tps[next] = tokensPerSecond;
            next = (next + 1) % CAPACITY;
            size = Math.min(size + 1, CAPACITY);
        }

        synchronized BackendStats stats(long since, Duration window) {
            int calls = 0;
            int failures = 0;
            int speeds = 0;
            double speedSum = 0;
            long[] ttfts = new long[size];
            int ttftCount = 0;
            for (int i = 0; i < size; i++) {
                if (at[i] - since < 0) {
                    continue;
                }
                calls++;
                failures += failed[i] ? 1 : 0;
                if (ttft[i] >= 0) {
                    ttfts[ttftCount++] = ttft[i];
                }
                if (!Double.isNaN(tps[i])) {
                    speeds++;
                    speedSum += tps[i];
                }
            }
            Arrays.sort(ttfts, 0, ttftCount);
            return new BackendStats(window, calls, failures, calls == 0 ? 0 : (double) failures / calls,
                    speeds == 0 ? Double.NaN : speedSum / speeds,
                    percentile(ttfts, ttftCount, 0.50), percentile(ttfts, ttftCount, 0.95));
        }

        private static Duration percentile(long[] sorted, int count, double p) {
            if (count == 0) {
                return null;
            }
            int index = (int) Math.ceil(p * count) - 1;
            return Duration.ofNanos(sorted[Math.max(0, Math.min(count - 1, index))]);
        }
    }
}
