package dev.lazarus.gateway.admin;

import dev.lazarus.gateway.api.ApiError;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;

/**
 * Slows down guessing of the admin token: an address that failed {@code failuresBeforeBackoff} times must
 * wait before its next try, twice as long after each further failure (up to the maximum); past a number
 * of failures per minute from all addresses, every admin request waits for the minute to end. A waiting
 * caller is refused before its token is looked at (429 with {@code Retry-After}), so waiting cannot be
 * skipped by guessing right. A success from an address forgets its failures.
 */
final class AdminLoginThrottle {

    /** Addresses remembered at most; past it, those whose wait is over are forgotten first. */
    private static final int MAX_ADDRESSES = 10_000;
    private static final long MINUTE = Duration.ofMinutes(1).toNanos();

    private record Failures(int count, long waitUntil) {}

    private record Window(long start, int failures) {}

    private final AdminGuardProperties limits;
    private final LongSupplier nanoTime;
    private final Map<String, Failures> byAddress = new ConcurrentHashMap<>();
    private final AtomicReference<Window> window;

    AdminLoginThrottle(AdminGuardProperties limits, LongSupplier nanoTime) {
        this.limits = limits;
        this.nanoTime = nanoTime;
        this.window = new AtomicReference<>(new Window(nanoTime.getAsLong(), 0));
    }

    /** How long {@code address} must still wait, or null when it may try now. */
    Duration waitFor(String address) {
        long now = nanoTime.getAsLong();
        long wait = 0;
        Window current = window.get();
        if (limits.globalFailuresPerMinute() > 0 && current.failures() >= limits.globalFailuresPerMinute()
                && now - current.start() < MINUTE) {
            wait = current.start() + MINUTE - now;
        }
        Failures failures = byAddress.get(address);
        if (failures != null && failures.waitUntil() - now > wait) {
            wait = failures.waitUntil() - now;
        }
        return wait > 0 ? Duration.ofNanos(wait) : null;
    }

    /**
     * The 429 {@code address} gets while it must wait (its {@code Retry-After} in whole seconds, at least one), or
     * null when it may try now.
     *
     * @param what the tries counted, as the message names them ("admin logins")
     */
    ApiError refusal(String address, String what) {
        Duration wait = waitFor(address);
        if (wait == null) {
            return null;
        }
        long seconds = Math.max(1, (wait.toMillis() + 999) / 1000);
        return new ApiError(HttpStatus.TOO_MANY_REQUESTS, "invalid_request_error", "rate_limit_exceeded", null,
                "Too many failed " + what + "; retry in " + seconds + " s.")
                .withHeader(HttpHeaders.RETRY_AFTER, Long.toString(seconds));
    }

    void failed(String address) {
        long now = nanoTime.getAsLong();
        window.updateAndGet(w -> now - w.start() >= MINUTE ? new Window(now, 1) : new Window(w.start(), w.failures() + 1));
        if (byAddress.size() >= MAX_ADDRESSES) {
            byAddress.values().removeIf(f -> f.waitUntil() - now <= 0);
        }
        byAddress.compute(address, (a, f) -> {
            int count = f == null ? 1 : f.count() + 1;
            int over = count - limits.failuresBeforeBackoff();
            if (over < 0) {
                return new Failures(count, now);
            }
            long wait = limits.backoff().toNanos() << Math.min(over, 30);
            wait = wait <= 0 ? limits.maxBackoff().toNanos() : Math.min(wait, limits.maxBackoff().toNanos());
            return new Failures(count, now + wait);
        });
    }

    void succeeded(String address) {
        byAddress.remove(address);
    }
}
