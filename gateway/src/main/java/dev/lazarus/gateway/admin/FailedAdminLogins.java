package dev.lazarus.gateway.admin;

import dev.lazarus.gateway.policy.Actor;
import dev.lazarus.gateway.policy.AuditEvent;
import dev.lazarus.gateway.policy.PolicyStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Collectors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.server.reactive.ServerHttpRequest;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Requests to {@code /admin} with a missing or wrong token: logged at WARN and journalled as
 * {@code admin-login-failed} with the caller's address, method and path, never the token presented.
 * At most one entry per {@link #WINDOW}, carrying how many failures it stands for and the addresses they
 * came from (the most frequent first): someone guessing tokens must not fill the journal (each entry is a
 * synced write) nor the log, and the entry must name the guesser, not whoever failed next.
 */
final class FailedAdminLogins {

    static final Duration WINDOW = Duration.ofSeconds(10);
    private static final Logger log = LoggerFactory.getLogger(FailedAdminLogins.class);

    private final PolicyStore store;
    private final Clock clock;
    private final AtomicReference<Instant> lastRecorded = new AtomicReference<>(Instant.EPOCH);
    private final AtomicLong unrecorded = new AtomicLong();
    /** The failures not journalled yet, by address (at most {@link #MAX_ADDRESSES} of them). */
    private final Map<String, LongAdder> unrecordedFrom = new ConcurrentHashMap<>();
    private static final int MAX_ADDRESSES = 1000;
    private static final int ADDRESSES_NAMED = 5;

    FailedAdminLogins(PolicyStore store, Clock clock) {
        this.store = store;
        this.clock = clock;
    }

    /**
     * Completes once the failure is journalled (or skipped as within the window): the refusal is sent
     * after it, so the journal is never behind what the caller saw.
     *
     * @param from the caller's address ({@link ClientAddress})
     * @param why {@code missing token} or {@code wrong token}
     */
    Mono<Void> failed(ServerHttpRequest request, String from, String why) {
        LongAdder fromHere = unrecordedFrom.get(from);
        if (fromHere == null && unrecordedFrom.size() < MAX_ADDRESSES) {
            fromHere = unrecordedFrom.computeIfAbsent(from, a -> new LongAdder());
        }
        if (fromHere != null) {
            fromHere.increment();
        }
        long failures = unrecorded.incrementAndGet();
        Instant now = clock.instant();
        Instant last = lastRecorded.get();
        if (now.isBefore(last.plus(WINDOW)) || !lastRecorded.compareAndSet(last, now)) {
            return Mono.empty();
        }
        unrecorded.addAndGet(-failures);
        String reason = "admin API refused: " + why + " from " + from + " (" + request.getMethod() + " "
                + request.getPath().value() + "); " + drainAddresses();
        log.warn("{}; {} such failure(s) since the last report", reason, failures);
        AuditEvent event = new AuditEvent(0, now, null, Actor.UNAUTHENTICATED, "admin-login-failed", null, null, reason,
                Map.of("failures", failures));
        // Off the event loop: the journal syncs to disk.
        return Mono.fromRunnable(() -> store.record(null, event)).subscribeOn(Schedulers.boundedElastic())
                .onErrorResume(e -> {
                    log.warn("journalling a failed admin login failed: {}", e.toString());
                    return Mono.empty();
                }).then();
    }

    /** The failures since the last entry by address, most first, and forgets them. */
    private String drainAddresses() {
        Map<String, Long> counts = new HashMap<>();
        for (String address : List.copyOf(unrecordedFrom.keySet())) {
            LongAdder adder = unrecordedFrom.remove(address);
            if (adder != null) {
                counts.put(address, adder.sum());
            }
        }
        List<Map.Entry<String, Long>> most = counts.entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed()).toList();
        String named = most.stream().limit(ADDRESSES_NAMED).map(e -> e.getValue() + " from " + e.getKey())
                .collect(Collectors.joining(", "));
        return "failures since the last report: " + named + (most.size() > ADDRESSES_NAMED
                ? " and " + (most.size() - ADDRESSES_NAMED) + " more address(es)" : "");
    }
}
