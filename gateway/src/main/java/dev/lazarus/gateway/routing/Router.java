package dev.lazarus.gateway.routing;

import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.ProtocolNotServedException;
import dev.lazarus.backend.api.WholeAnswer;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatEvents;
import dev.lazarus.backend.api.openai.Completion;
import dev.lazarus.backend.api.openai.CompletionRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The routing entry point: public model → route → planned chain → attempt loop, bounded by the
 * route's overall timeout. Returns the backend's chunks as they are (the API layer gives them the
 * response's identity); every failure is a signal on the returned Flux, never a throw. Each call names
 * the {@link ApiEndpoint} the client called (a protocol layer that translates onto chat completions
 * names its own), which decides the backends that can serve it and tags its metrics and log lines.
 * The form of an OpenAI answer (whole, streamed, aggregated) is decided here: {@link #chatAnswer},
 * {@link #completionAnswer}.
 */
public final class Router {

    private static final int MODELS_LISTED = 20;

    private final RouteTable routes;
    private final RoutePlanner planner;
    private final AttemptLoop loop;
    private final List<RouteFilter> reasons;

    public Router(RouteTable routes, RoutePlanner planner, AttemptLoop loop) {
        this(routes, planner, loop, List.of());
    }

    /**
     * @param reasons the filters the planner applies, asked in {@link RouteLayer} order why they left a backend out
     *                ({@link RouteFilter#leftOut})
     */
    public Router(RouteTable routes, RoutePlanner planner, AttemptLoop loop, List<? extends RouteFilter> reasons) {
        this.routes = routes;
        this.planner = planner;
        this.loop = loop;
        this.reasons = RouteFilter.inOrder(reasons);
    }

    public RouteTable routes() {
        return routes;
    }

    /** A chat answer as typed chunks, streamed or not (with failover and mid-stream resume), for chat completions. */
    public Flux<ChatCompletionChunk> chat(ChatCompletionRequest request) {
        return chat(request, ApiEndpoint.CHAT_COMPLETIONS);
    }

    /**
     * A chat answer as typed chunks, serving {@code endpoint}: what a protocol translated onto chat
     * completions (Responses, Messages) calls, whether its client streams or not.
     */
    public Flux<ChatCompletionChunk> chat(ChatCompletionRequest request, ApiEndpoint endpoint) {
        return route(Endpoint.CHAT.serving(endpoint), request, request.model());
    }

    public Flux<Completion> completion(CompletionRequest request) {
        return route(Endpoint.COMPLETION, request, request.model());
    }

    /**
     * A chat completion in the form its request and route call for: a non-streaming request whose backends
     * all {@link #answersWhole answer whole} stays non-streaming upstream; a streamed one is relayed as
     * {@link #chatEvents events}; any other is streamed upstream and put together by the caller.
     */
    public Answer<ChatEvents, ChatCompletionChunk> chatAnswer(ChatCompletionRequest request) {
        request = withDefaultLimit(request);
        if (request.isStream()) {
            return new Answer.Streamed<>(chatEvents(request));
        }
        return answersWhole(request.model()) ? new Answer.Whole<>(route(Endpoint.CHAT_WHOLE, request, request.model()).single())
                : new Answer.Aggregated<>(chat(request));
    }

    /** A legacy completion in the form its request and route call for, as {@link #chatAnswer} decides it. */
    public Answer<Completion, Completion> completionAnswer(CompletionRequest request) {
        if (request.isStream()) {
            return new Answer.Streamed<>(completion(request));
        }
        return answersWhole(request.model())
                ? new Answer.Whole<>(route(Endpoint.COMPLETION_WHOLE, request, request.model()).single())
                : new Answer.Aggregated<>(completion(request));
    }

    /**
     * A request to an endpoint answered by one JSON document (embeddings, rerank, tokenize, detokenize), with
     * its {@code model} routed as chat's is: only to backends that serve {@code endpoint}, the next one when a
     * call fails. The answer as the backend's server gave it; the API layer writes its {@code model}.
     */
    public Mono<Map<String, Object>> json(ApiEndpoint endpoint, Map<String, Object> request) {
        String model = request.get("model") instanceof String name ? name : null;
        return route(Endpoint.json(endpoint), request, model).single();
    }

    /**
     * A request to a protocol endpoint (Messages, Responses) along its route, the backends that turned the protocol
     * off left out. The leading backends of the plan that serve it natively get the client's request ({@code body},
     * streamed or not as it asks), their answer passed through; when every one of them failed before answering, the
     * rest of the plan serves {@code chat}, the request translated onto chat completions, as {@link #chat} does (a
     * native backend among them is translated for too, so that a stream cut there resumes on any of them). A
     * native stream cut mid-answer is resumed as a translated one, on the backends after it ({@link ProtocolContinuation}).
     * A native backend whose server answers that it lacks the protocol's endpoint ({@link ProtocolNotServedException})
     * is sent the translated request at once, no failover, and the plan goes on translated from it. A null
     * {@code body} (a request no server but the gateway can serve as it is) is served translated throughout.
     */
    public Flux<ProtocolPiece> protocol(ApiEndpoint endpoint, Map<String, Object> body, ChatCompletionRequest chat,
            boolean stream) {
        String model = chat.model();
        ChatCompletionRequest limited = withDefaultLimit(chat);
        return Flux.defer(() -> {
            ModelRoute route = routes.find(model).orElseThrow(() -> modelNotFound(model));
            Endpoint<ChatCompletionRequest, ChatCompletionChunk> chunks = Endpoint.CHAT.serving(endpoint);
            List<RouteTarget> plan = plan(route, chunks, model);
            int natives = 0;
            while (body != null && natives < plan.size()
                    && Endpoint.servesNatively(plan.get(natives).backend(), endpoint)) {
                natives++;
            }
            List<RouteTarget> translated = plan.subList(natives, plan.size());
            Map<String, Object> sent = body;
            ChatCompletionRequest replayed = chat;
            if (natives > 0 && stream && plan.size() > 1 && endpoint == ApiEndpoint.RESPONSES && ReplaySeed.wanted(chat)) {
                long seed = ReplaySeed.draw();
                sent = ReplaySeed.into(body, seed);
                replayed = ReplaySeed.into(chat, seed);
            }
            Flux<ProtocolPiece> answer = loop.run(route.name(), translated, chunks, limited).map(ProtocolPiece.Chunk::new);
            if (natives > 0) {
                List<RouteTarget> head = plan.subList(0, natives);
                ProtocolContinuation cut = new ProtocolContinuation(replayed, plan,
                        (next, continuation) -> loop.resumeRun(route.name(), next, chunks, continuation));
                Flux<ProtocolPiece> passed = (stream
                        ? loop.run(route.name(), head, Endpoint.protocolEvents(endpoint), sent).contextWrite(cut::into)
                        : loop.run(route.name(), head, Endpoint.protocolAnswer(endpoint), sent).<ProtocolPiece>map(ProtocolPiece.Whole::new))
                        .onErrorResume(ProtocolNotServedException.class, notServed -> loop.run(route.name(),
                                from(plan, notServed.backendId()), chunks, limited).<ProtocolPiece>map(ProtocolPiece.Chunk::new));
                Flux<ProtocolPiece> rest = answer;
                answer = translated.isEmpty() ? passed : passed.onErrorResume(AllBackendsFailedException.class,
                        failed -> rest.onErrorMap(AllBackendsFailedException.class, later -> new AllBackendsFailedException(
                                route.name(), concat(failed.failures(), later.failures()))));
            }
            return bounded(route, answer, model);
        });
    }

    /**
     * The plan from the backend that turned out not to serve a protocol itself on: that backend first, the request
     * translated for it (it learned to translate), then the rest, as a translated plan is tried.
     */
    private static List<RouteTarget> from(List<RouteTarget> plan, String backendId) {
        for (int i = 0; i < plan.size(); i++) {
            if (plan.get(i).backendId().equals(backendId)) {
                return plan.subList(i, plan.size());
            }
        }
        return plan;
    }

    /** {@code request} with its model's {@link ModelRoute#defaultMaxTokens} where it sets no output limit itself. */
    private ChatCompletionRequest withDefaultLimit(ChatCompletionRequest request) {
        if (request.maxTokens() != null || request.maxCompletionTokens() != null) {
            return request;
        }
        Integer limit = routes.find(request.model()).map(ModelRoute::defaultMaxTokens).orElse(null);
        return limit == null ? request : request.toBuilder().maxTokens(limit).build();
    }

    private static <E> List<E> concat(List<E> first, List<E> then) {
        List<E> both = new ArrayList<>(first);
        both.addAll(then);
        return both;
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

    private <R, T> Flux<T> route(Endpoint<R, T> endpoint, R request, String model) {
        return Flux.defer(() -> {
            ModelRoute route = routes.find(model).orElseThrow(() -> modelNotFound(model, routes));
            return run(route, plan(route, endpoint, model), endpoint, request, model);
        });
    }

    /**
     * A streamed chat request, its answer in the pieces the upstream sent it in. Where the plan holds one
     * candidate whose backend {@link Endpoint#streamsEvents streams events}, its server's events are relayed
     * as they came ({@link Endpoint#CHAT_EVENTS}: no typed chunk per event, one signal per piece through
     * the attempt loop and the decorators, which judge, meter and time it as they do chunks); with
     * several candidates (failover and resume between them) or another kind of backend, the typed chunks
     * of {@link #chat}, one a piece.
     */
    public Flux<ChatEvents> chatEvents(ChatCompletionRequest request) {
        return chatEvents(request, ApiEndpoint.CHAT_COMPLETIONS);
    }

    /** {@link #chatEvents(ChatCompletionRequest)} serving {@code endpoint}. */
    public Flux<ChatEvents> chatEvents(ChatCompletionRequest request, ApiEndpoint endpoint) {
        String model = request.model();
        return Flux.defer(() -> {
            ModelRoute route = routes.find(model).orElseThrow(() -> modelNotFound(model, routes));
            Endpoint<ChatCompletionRequest, ChatCompletionChunk> chunks = Endpoint.CHAT.serving(endpoint);
            List<RouteTarget> plan = plan(route, chunks, model);
            if (plan.size() == 1 && Endpoint.streamsEvents(plan.getFirst().backend())) {
                return run(route, plan, Endpoint.CHAT_EVENTS.serving(endpoint), request, model);
            }
            return run(route, plan, chunks, request, model).map(ChatEvents::of);
        });
    }

    /** The targets to try, in order; throws (into the caller's defer) when none is left. */
    private List<RouteTarget> plan(ModelRoute route, Endpoint<?, ?> endpoint, String model) {
        List<RouteTarget> plan = planner.plan(route, endpoint).stream()
                .filter(target -> endpoint.supports(target.backend()))
                .toList();
        if (plan.isEmpty()) {
            List<RouteTarget> capable = route.targets().stream().filter(t -> endpoint.supports(t.backend())).toList();
            if (capable.isEmpty()) {
                throw BackendException.invalidRequest(
                        "The model '" + model + "' is not served at " + endpoint.api().paths().getFirst()
                                + " by any of its backends.", "model");
            }
            // The planner and its filters left every capable backend out (breaker open, down,
            // disabled): that is a 503 with Retry-After, not the request's fault.
            throw new AllBackendsFailedException(route.name(), capable.stream()
                    .map(t -> new AllBackendsFailedException.AttemptFailure(t.backendId(), leftOut(t)))
                    .toList());
        }
        return plan;
    }

    private <R, T> Flux<T> run(ModelRoute route, List<RouteTarget> plan, Endpoint<R, T> endpoint, R request,
            String model) {
        return bounded(route, loop.run(route.name(), plan, endpoint, request), model);
    }

    /** {@code answer} within the route's overall timeout. */
    private static <T> Flux<T> bounded(ModelRoute route, Flux<T> answer, String model) {
        Duration timeout = route.overallTimeout();
        return RequestDeadline.bound(answer, timeout, LoopTimer.INSTANCE,
                () -> BackendException.timeout("the request for model '" + model + "' did not finish within " + timeout));
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

    /** The 404 for a model name that has no route, with the names that have one (the first 20). */
    public static BackendException modelNotFound(String model, RouteTable routes) {
        List<String> names = routes.routes().stream().map(ModelRoute::name).toList();
        String available = String.join(", ", names.subList(0, Math.min(MODELS_LISTED, names.size())))
                + (names.size() > MODELS_LISTED ? " and " + (names.size() - MODELS_LISTED) + " more (GET /v1/models)" : "");
        return new BackendException(BackendErrorKind.MODEL_NOT_FOUND, "The model '" + echo(model)
                + "' does not exist or you do not have access to it."
                + (names.isEmpty() ? "" : " Available models: " + available + "."),
                "model", null, null);
    }

    public static BackendException modelNotFound(String model) {
        return new BackendException(BackendErrorKind.MODEL_NOT_FOUND,
                "The model '" + echo(model) + "' does not exist or you do not have access to it.", "model", null, null);
    }

    /** The longest part of a client's model name an error echoes back. */
    static final int ECHOED = 256;

    /** A model name the client sent, as an error echoes it: at most {@link #ECHOED} characters (a name may be megabytes). */
    public static String echo(String model) {
        if (model.length() <= ECHOED) {
            return model;
        }
        int end = Character.isHighSurrogate(model.charAt(ECHOED - 1)) ? ECHOED - 1 : ECHOED;
        return model.substring(0, end) + "...";
    }
}
