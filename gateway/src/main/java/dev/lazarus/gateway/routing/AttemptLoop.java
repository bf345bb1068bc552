package dev.lazarus.gateway.routing;

import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.ModelInfo;
import dev.lazarus.backend.api.Redactor;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;

/**
 * Walks a planned fallback chain for one request: call a backend; when it fails before its first
 * chunk and its error kind allows it, call the next one; when every one failed, report all
 * failures. A failure after the first chunk goes to the {@link StreamResumer}. In a continuation
 * (the resumer's run), a 400 also moves on: it answers the prefix, not the client's request. Breakers, metering
 * and other policy come in as the {@link BackendCallDecorator} around each call; what happens is
 * reported to the {@link RoutingListener}.
 */
public final class AttemptLoop {

    private static final Logger log = LoggerFactory.getLogger(AttemptLoop.class);

    private final BackendCallDecorator decorator;
    private final StreamResumer resumer;
    private final RoutingListener listener;
    private final Redactor redactor;

    public AttemptLoop(BackendCallDecorator decorator, StreamResumer resumer) {
        this(decorator, resumer, RoutingListener.NONE);
    }

    public AttemptLoop(BackendCallDecorator decorator, StreamResumer resumer, RoutingListener listener) {
        this(decorator, resumer, listener, Redactor.shapesOnly());
    }

    /**
     * @param redactor applied to every failure a backend signals, before any decorator, log line,
     *                 journal entry or client sees it
     */
    public AttemptLoop(BackendCallDecorator decorator, StreamResumer resumer, RoutingListener listener,
            Redactor redactor) {
        this.decorator = decorator;
        this.resumer = resumer;
        this.listener = listener;
        this.redactor = redactor;
    }

    public <R, T> Flux<T> run(String model, List<RouteTarget> plan, Endpoint<R, T> endpoint, R request) {
        return Flux.defer(() -> attempt(model, plan, 0, endpoint, request, List.of(), new RequestClock()));
    }

    /** A continuation after a mid-stream failure: same loop, but its first chunk is not the request's. */
    <R, T> Flux<T> resumeRun(String model, List<RouteTarget> plan, Endpoint<R, T> endpoint, R request) {
        return Flux.defer(() -> attempt(model, plan, 0, endpoint, request, List.of(), null));
    }

    private <R, T> Flux<T> attempt(String model, List<RouteTarget> plan, int index, Endpoint<R, T> endpoint,
            R request, List<AllBackendsFailedException.AttemptFailure> failures, RequestClock clock) {
        if (index >= plan.size()) {
            return Flux.error(new AllBackendsFailedException(model, failures));
        }
        RouteTarget target = plan.get(index);
        return Flux.deferContextual(context -> {
            ServedBy served = ServedBy.in(context);
            // Per subscription: has anything of this backend's answer gone downstream yet?
            boolean[] relayed = {false};
            Flux<T> call = new UpstreamCall<>(() -> endpoint.call(target, request), e -> redacted(target, e), clock);
            return decorator.decorate(new Attempt<>(model, target, endpoint, index,
                            plan.subList(index + 1, plan.size())), call)
                    .doOnNext(chunk -> {
                        if (!relayed[0]) {
                            relayed[0] = true;
                            if (served != null) {
                                served.add(new ServedBy.Backend(target.backendId(), servedModel(model, target)));
                            }
                            if (clock != null) {
                                listener.firstChunk(model, target.backendId(), clock.gatewayNanos());
                            }
                        }
                    })
                    .onErrorResume(error -> {
                        BackendException failure = asBackendException(error);
                        if (relayed[0]) {
                            return resumer.resume(new MidStreamFailure<>(model, request, endpoint, target,
                                    plan.subList(index + 1, plan.size()), failure,
                                    (next, continuation) -> resumeRun(model, next, endpoint, continuation)));
                        }
                        // A continuation's 400 is about the prefix the gateway added (the client's request
                        // was accepted upstream): another backend may take it, and the client never sees it.
                        boolean refusedContinuation = clock == null && failure.kind() == BackendErrorKind.INVALID_REQUEST;
                        if (!failure.kind().tryNextBackend() && !refusedContinuation) {
                            return Flux.error(failure);
                        }
                        String nextId = index + 1 < plan.size() ? plan.get(index + 1).backendId() : null;
                        log.warn("{} for model '{}': backend '{}' {} ({}: {}); {}", endpoint.name(), model,
                                target.backendId(),
                                refusedContinuation ? "refused to continue the answer" : "failed before its first token",
                                failure.kind(), failure.getMessage(),
                                nextId != null ? "trying '" + nextId + "'" : "no backend left");
                        listener.failedOver(model, target.backendId(), nextId, failure);
                        List<AllBackendsFailedException.AttemptFailure> next = new ArrayList<>(failures);
                        next.add(new AllBackendsFailedException.AttemptFailure(target.backendId(), failure));
                        return attempt(model, plan, index + 1, endpoint, request, next, clock);
                    });
        });
    }

    /**
     * The model a backend served: the name the route sends it when configured for that backend; else the
     * public name when the backend lists it among its models (a server of several picks by name), or the one
     * model it lists (a server of one serves it whatever it is asked for); else the name it was sent.
     */
    static String servedModel(String routeModel, RouteTarget target) {
        String sent = target.backendModel();
        if (!sent.equals(routeModel)) {
            return sent;
        }
        List<ModelInfo> models = target.backend().describe().models();
        if (models.stream().anyMatch(m -> sent.equals(m.id()))) {
            return sent;
        }
        return models.size() == 1 && models.getFirst().id() != null ? models.getFirst().id() : sent;
    }

    /** A backend's failure as the gateway keeps it: typed, its message and causes redacted. */
    private BackendException redacted(RouteTarget target, Throwable error) {
        if (error instanceof BackendException e) {
            return e.withMessage(redactor.redact(e.getMessage()), redactor.redact(e.getCause()));
        }
        return new BackendException(BackendErrorKind.INTERNAL,
                "backend '" + target.backendId() + "' failed: " + redactor.redact(error.toString()), redactor.redact(error));
    }

    private static BackendException asBackendException(Throwable error) {
        return error instanceof BackendException be ? be
                : new BackendException(BackendErrorKind.INTERNAL, String.valueOf(error.getMessage()), error);
    }

    /**
     * The gateway's own share of the time to the first chunk: since the request was routed, less
     * the time each backend call took to answer (first chunk or failure). One per request; the
     * attempts of one request run one after the other, so plain fields suffice.
     */
    private static final class RequestClock implements UpstreamCall.Clock {
        private final long start = System.nanoTime();
        private long upstreamNanos;
        private long callStart;
        private boolean callAnswered;

        @Override
        public void callStarted() {
            callStart = System.nanoTime();
            callAnswered = false;
        }

        @Override
        public void answered() {
            if (!callAnswered) {
                callAnswered = true;
                upstreamNanos += System.nanoTime() - callStart;
            }
        }

        long gatewayNanos() {
            return Math.max(0, System.nanoTime() - start - upstreamNanos);
        }
    }
}
