package dev.lazarus.gateway.routing;

import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.WholeAnswer;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.Completion;
import dev.lazarus.backend.api.openai.CompletionRequest;
import java.time.Duration;
import java.util.List;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The routing entry point: public model → route → planned chain → attempt loop, bounded by the
 * route's overall timeout. Returns the backend's chunks as they are (the API layer gives them the
 * response's identity); every failure is a signal on the returned Flux, never a throw.
 */
public final class Router {

    private final RouteTable routes;
    private final RoutePlanner planner;
    private final AttemptLoop loop;
    private final List<RouteFilter> reasons;

    public Router(RouteTable routes, RoutePlanner planner, AttemptLoop loop) {
        this(routes, planner, loop, List.of());
    }

    /** @param reasons the filters the planner applies, asked why they left a backend out ({@link RouteFilter#leftOut}) */
    public Router(RouteTable routes, RoutePlanner planner, AttemptLoop loop, List<? extends RouteFilter> reasons) {
        this.routes = routes;
        this.planner = planner;
        this.loop = loop;
        this.reasons = List.copyOf(reasons);
    }

    public RouteTable routes() {
        return routes;
    }

    public Flux<ChatCompletionChunk> chat(ChatCompletionRequest request) {
        return route(Endpoint.CHAT, request, request.model());
    }

    public Flux<Completion> completion(CompletionRequest request) {
        return route(Endpoint.COMPLETION, request, request.model());
    }

    /**
     * Whether a non-streaming request for {@code model} can stay non-streaming upstream: every
     * backend of its route answers whole (a resumable stream is then never needed: the client has
     * nothing before the end, and a failed call is simply made again on the next backend).
     */
    public boolean answersWhole(String model) {
        return routes.find(model).map(route -> !route.targets().isEmpty()
                && route.targets().stream().allMatch(t -> Endpoint.answersWhole(t.backend()))).orElse(false);
    }

    /** A non-streaming chat request whose route {@link #answersWhole answers whole}: one answer. */
    public Flux<WholeAnswer> chatWhole(ChatCompletionRequest request) {
        return route(Endpoint.CHAT_WHOLE, request, request.model());
    }

    public Flux<WholeAnswer> completionWhole(CompletionRequest request) {
        return route(Endpoint.COMPLETION_WHOLE, request, request.model());
    }

    private <R, T> Flux<T> route(Endpoint<R, T> endpoint, R request, String model) {
        return Flux.defer(() -> {
            ModelRoute route = routes.find(model).orElseThrow(() -> modelNotFound(model));
            List<RouteTarget> plan = planner.plan(route, endpoint).stream()
                    .filter(target -> endpoint.supports(target.backend()))
                    .toList();
            if (plan.isEmpty()) {
                List<RouteTarget> capable = route.targets().stream().filter(t -> endpoint.supports(t.backend())).toList();
                if (capable.isEmpty()) {
                    return Flux.error(BackendException.invalidRequest(
                            "The model '" + model + "' does not support the " + endpoint.name() + " endpoint.",
                            "model"));
                }
                // The planner and its filters left every capable backend out (breaker open, down,
                // disabled): that is a 503 with Retry-After, not the request's fault.
                return Flux.error(new AllBackendsFailedException(route.name(), capable.stream()
                        .map(t -> new AllBackendsFailedException.AttemptFailure(t.backendId(), leftOut(t)))
                        .toList()));
            }
            return loop.run(route.name(), plan, endpoint, request)
                    .takeUntilOther(deadline(route.overallTimeout(), model))
                    .contextWrite(RequestDeadline.in(route.overallTimeout()));
        });
    }

    private BackendException leftOut(RouteTarget target) {
        for (RouteFilter filter : reasons) {
            BackendException reason = filter.leftOut(target);
            if (reason != null) {
                return reason;
            }
        }
        return BackendException.unavailable("backend '" + target.backendId() + "' is not available");
    }

    /** Fails the whole request, wherever it is, once the overall time is up. */
    private static Mono<Void> deadline(Duration timeout, String model) {
        return Mono.delay(timeout, LoopTimer.INSTANCE).then(Mono.error(() -> BackendException.timeout(
                "the request for model '" + model + "' did not finish within " + timeout)));
    }

    public static BackendException modelNotFound(String model) {
        return new BackendException(BackendErrorKind.MODEL_NOT_FOUND,
                "The model '" + model + "' does not exist or you do not have access to it.", "model", null, null);
    }
}
