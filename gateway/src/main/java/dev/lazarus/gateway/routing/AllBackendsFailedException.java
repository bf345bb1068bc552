package dev.lazarus.gateway.routing;

import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;

/** Every backend of a route failed before sending a token. */
public final class AllBackendsFailedException extends RuntimeException {

    /** One backend's failure. */
    public record AttemptFailure(String backendId, BackendException cause) {}

    private final String model;
    private final List<AttemptFailure> failures;

    public AllBackendsFailedException(String model, List<AttemptFailure> failures) {
        super("no backend could serve model '" + model + "': " + failures.stream()
                .map(f -> f.backendId() + " " + f.cause().kind().name().toLowerCase(java.util.Locale.ROOT))
                .collect(Collectors.joining(", ")), null, false, false);
        this.model = model;
        this.failures = List.copyOf(failures);
    }

    public String model() {
        return model;
    }

    public List<AttemptFailure> failures() {
        return failures;
    }

    /**
     * The kind shared by every failure when it is about the request rather than the backends
     * (every backend found the prompt too long, or was busy): the client should hear that, not a
     * generic 503. Null when the failures differ or were backend faults.
     */
    public BackendErrorKind commonRequestKind() {
        if (failures.isEmpty()) {
            return null;
        }
        BackendErrorKind first = failures.getFirst().cause().kind();
        boolean shared = failures.stream().allMatch(f -> f.cause().kind() == first);
        return shared && !first.backendFault() ? first : null;
    }

    /**
     * When the earliest backend may serve again: the shortest of the backends' own Retry-After
     * (an open breaker's time to half-open, a server's header), counting {@code unknown} for a
     * backend that did not say.
     */
    public Duration earliestRetry(Duration unknown) {
        return failures.stream()
                .map(f -> f.cause().retryAfter() != null ? f.cause().retryAfter() : unknown)
                .filter(Objects::nonNull)
                .min(Duration::compareTo)
                .orElse(unknown);
    }

    /** The longest Retry-After any backend asked for, or null when none said. */
    public Duration retryAfter() {
        return failures.stream()
                .map(f -> f.cause().retryAfter())
                .filter(Objects::nonNull)
                .max(Duration::compareTo)
                .orElse(null);
    }
}
