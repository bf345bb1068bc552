package dev.lazarus.gateway.api;

import java.time.Duration;

/**
 * The usage tokens one API key's answers counted in the current window (fixed windows of one length, the first
 * starting when the key was first seen, as Resilience4j's rate limiter counts requests). Tokens are known only once
 * an answer ends, so the window admits requests while the count is under the limit, and the answers under way when
 * it is reached may take it over; the key then waits for the next window.
 */
final class TokenWindow {

    private final long limit;
    private final long windowNanos;
    private final long origin = System.nanoTime();
    private long window;
    private long used;

    TokenWindow(long limit, Duration window) {
        this.limit = limit;
        this.windowNanos = window.toNanos();
    }

    /** Nanoseconds until this key may start a request again: 0 while the window's count is under the limit. */
    synchronized long nanosUntilOpen() {
        long now = System.nanoTime();
        roll(now);
        return used < limit ? 0 : origin + (window + 1) * windowNanos - now;
    }

    /** Counts the tokens of an answer that ended. */
    synchronized void charge(long tokens) {
        roll(System.nanoTime());
        used += tokens;
    }

    synchronized long used() {
        roll(System.nanoTime());
        return used;
    }

    private void roll(long now) {
        long current = (now - origin) / windowNanos;
        if (current != window) {
            window = current;
            used = 0;
        }
    }
}
