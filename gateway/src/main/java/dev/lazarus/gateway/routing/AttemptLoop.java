package dev.lazarus.gateway.routing;

import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;

/**
 * Walks a planned fallback chain for one request: call a backend; when it fails before its first
 * chunk and its error kind allows it, call the next one; when every one failed, report all
 * failures. A failure after the first chunk goes to the {@link StreamResumer}. Breakers, metering
 * and other policy come in as the {@link BackendCallDecorator} around each call.
 */
public final class AttemptLoop {

    private static final Logger log = LoggerFactory.getLogger(AttemptLoop.class);

    private final BackendCallDecorator decorator;
    private final StreamResumer resumer;

    public AttemptLoop(BackendCallDecorator decorator, StreamResumer resumer) {
        this.decorator = decorator;
        this.resumer = resumer;
    }

    public <R, T> Flux<T> run(String model, List<RouteTarget> plan, Endpoint<R, T> endpoint, R request) {
        return attempt(model, plan, 0, endpoint, request, List.of());
    }

    private <R, T> Flux<T> attempt(String model, List<RouteTarget> plan, int index, Endpoint<R, T> endpoint,
            R request, List<AllBackendsFailedException.AttemptFailure> failures) {
        if (index >= plan.size()) {
            return Flux.error(new AllBackendsFailedException(model, failures));
        }
        RouteTarget target = plan.get(index);
        return Flux.defer(() -> {
            // Per subscription: has anything of this backend's answer gone downstream yet?
            boolean[] relayed = {false};
            Flux<T> call = endpoint.call(target, request).onErrorMap(e -> !(e instanceof BackendException),
                    e -> new BackendException(BackendErrorKind.INTERNAL,
                            "backend '" + target.backendId() + "' failed: " + e, e));
            return decorator.decorate(new Attempt<>(model, target, endpoint, index), call)
                    .doOnNext(chunk -> relayed[0] = true)
                    .onErrorResume(error -> {
                        BackendException failure = asBackendException(error);
                        if (relayed[0]) {
                            return resumer.resume(new MidStreamFailure<>(model, request, endpoint, target,
                                    plan.subList(index + 1, plan.size()), failure));
                        }
                        if (!failure.kind().tryNextBackend()) {
                            return Flux.error(failure);
                        }
                        log.warn("model '{}': backend '{}' failed before its first token ({}: {}); {}", model,
                                target.backendId(), failure.kind(), failure.getMessage(),
                                index + 1 < plan.size() ? "trying '" + plan.get(index + 1).backendId() + "'"
                                        : "no backend left");
                        List<AllBackendsFailedException.AttemptFailure> next = new ArrayList<>(failures);
                        next.add(new AllBackendsFailedException.AttemptFailure(target.backendId(), failure));
                        return attempt(model, plan, index + 1, endpoint, request, next);
                    });
        });
    }

    private static BackendException asBackendException(Throwable error) {
        return error instanceof BackendException be ? be
                : new BackendException(BackendErrorKind.INTERNAL, String.valueOf(error.getMessage()), error);
    }
}
