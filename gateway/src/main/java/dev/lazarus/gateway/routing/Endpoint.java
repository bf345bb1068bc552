package dev.lazarus.gateway.routing;

import dev.lazarus.backend.api.BackendCapabilities;
import dev.lazarus.backend.api.ChatEventStreams;
import dev.lazarus.backend.api.ChatProtocol;
import dev.lazarus.backend.api.InferenceBackend;
import dev.lazarus.backend.api.JsonEndpoint;
import dev.lazarus.backend.api.NativeProtocols;
import dev.lazarus.backend.api.ProtocolMode;
import dev.lazarus.backend.api.WholeAnswer;
import dev.lazarus.backend.api.WholeAnswers;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatEvents;
import dev.lazarus.backend.api.openai.Completion;
import dev.lazarus.backend.api.openai.CompletionRequest;
import dev.lazarus.backend.api.openai.Usage;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiFunction;
import java.util.function.Function;
import reactor.core.publisher.Flux;

/**
 * One kind of backend call, described once so that the attempt loop, decorators and metering stay
 * generic over the request and chunk types, and the client-facing endpoint it serves (a chat call
 * may serve chat completions, the Responses API or the Messages API: {@link #serving}).
 *
 * @param api       the endpoint the client called: metric tags, log lines, which backends can serve it
 * @param kind      what the call returns, and so how its pieces are read and continued
 * @param invoke    starts the call on a backend
 * @param toBackend the request as a backend receives it: its own model name, always streamed with usage
 * @param usage     the usage a chunk carries, or null
 * @param <R>       request type
 * @param <T>       chunk type
 */
public record Endpoint<R, T>(
        ApiEndpoint api,
        CallKind kind,
        BiFunction<InferenceBackend, R, Flux<T>> invoke,
        BiFunction<R, String, R> toBackend,
        Function<T, Usage> usage) {

    public static final Endpoint<ChatCompletionRequest, ChatCompletionChunk> CHAT = new Endpoint<>(
            ApiEndpoint.CHAT_COMPLETIONS,
            CallKind.CHAT,
            InferenceBackend::chat,
            (request, model) -> request.withModel(model).asUsageStream(),
            ChatCompletionChunk::usage);

    /**
     * A streamed chat answer relayed as its server's events ({@link ChatEvents}) from a backend that can
     * ({@link ChatEventStreams}); the router plans it only for a route with one candidate left, whose
     * answer is never continued elsewhere (see {@link Router#chatEvents}).
     */
    public static final Endpoint<ChatCompletionRequest, ChatEvents> CHAT_EVENTS = new Endpoint<>(
            ApiEndpoint.CHAT_COMPLETIONS,
            CallKind.CHAT_EVENTS,
            (backend, request) -> ((ChatEventStreams) backend).chatEvents(request),
            (request, model) -> request.withModel(model).asUsageStream(),
            ChatEvents::lastUsage);

    public static final Endpoint<CompletionRequest, Completion> COMPLETION = new Endpoint<>(
            ApiEndpoint.COMPLETIONS,
            CallKind.COMPLETION,
            InferenceBackend::completion,
            (request, model) -> request.withModel(model).asUsageStream(),
            Completion::usage);

    /** A non-streaming chat request to backends that answer whole: the request as the client sent it. */
    public static final Endpoint<ChatCompletionRequest, WholeAnswer> CHAT_WHOLE = new Endpoint<>(
            ApiEndpoint.CHAT_COMPLETIONS,
            CallKind.WHOLE,
            (backend, request) -> ((WholeAnswers) backend).chatWhole(request).flux(),
            ChatCompletionRequest::withModel,
            WholeAnswer::usage);

    /** A non-streaming legacy completion to backends that answer whole. */
    public static final Endpoint<CompletionRequest, WholeAnswer> COMPLETION_WHOLE = new Endpoint<>(
            ApiEndpoint.COMPLETIONS,
            CallKind.WHOLE,
            (backend, request) -> ((WholeAnswers) backend).completionWhole(request).flux(),
            CompletionRequest::withModel,
            WholeAnswer::usage);

    public Endpoint {
        Objects.requireNonNull(api, "api");
        Objects.requireNonNull(kind, "kind");
    }

    /**
     * A request to one of the endpoints a backend answers with one JSON document ({@link ApiEndpoint#jsonEndpoint}),
     * its {@code model} the backend's own.
     */
    public static Endpoint<Map<String, Object>, Map<String, Object>> json(ApiEndpoint api) {
        JsonEndpoint endpoint = Objects.requireNonNull(api.jsonEndpoint(), () -> api + " is no JSON endpoint");
        return new Endpoint<>(api, CallKind.JSON,
                (backend, request) -> backend.json(endpoint, request).flux(),
                Endpoint::withModel,
                JsonUsage::of);
    }

    /**
     * A streamed request of {@code api}'s protocol to a backend that serves it natively ({@link NativeProtocols}): the
     * client's request, its {@code model} the backend's own; the server's events read for usage and their end
     * ({@link ProtocolStreamReader}).
     */
    public static Endpoint<Map<String, Object>, ProtocolPiece> protocolEvents(ApiEndpoint api) {
        ChatProtocol protocol = Objects.requireNonNull(api.protocol(), () -> api + " is no protocol endpoint");
        return new Endpoint<>(api, CallKind.PROTOCOL_EVENTS,
                (backend, request) -> Flux.defer(() -> {
                    ProtocolStreamReader reader = new ProtocolStreamReader(protocol);
                    return ((NativeProtocols) backend).protocolEvents(protocol, request)
                            .<ProtocolPiece>map(reader::read)
                            .concatWith(Flux.defer(reader::end));
                }),
                Endpoint::withModel,
                // a resumed stream's chat chunks come after the attempt's decorators, which see events only
                piece -> piece instanceof ProtocolPiece.Events events ? events.usage() : null);
    }

    /** A non-streamed request of {@code api}'s protocol to a backend that serves it natively: one JSON answer. */
    public static Endpoint<Map<String, Object>, Map<String, Object>> protocolAnswer(ApiEndpoint api) {
        ChatProtocol protocol = Objects.requireNonNull(api.protocol(), () -> api + " is no protocol endpoint");
        return new Endpoint<>(api, CallKind.JSON,
                (backend, request) -> ((NativeProtocols) backend).protocolAnswer(protocol, request).flux(),
                Endpoint::withModel,
                JsonUsage::of);
    }

    /** Whether {@code backend} passes {@code api}'s protocol through to its server. */
    public static boolean servesNatively(InferenceBackend backend, ApiEndpoint api) {
        return api.protocol() != null && backend instanceof NativeProtocols
                && backend.describe().capabilities().mode(api.protocol()) == ProtocolMode.NATIVE;
    }

    private static Map<String, Object> withModel(Map<String, Object> request, String model) {
        Map<String, Object> sent = new LinkedHashMap<>(request);
        sent.put("model", model);
        return sent;
    }

    /** The same call serving {@code endpoint} (a protocol translated onto chat completions). */
    public Endpoint<R, T> serving(ApiEndpoint endpoint) {
        return endpoint == api ? this : new Endpoint<>(endpoint, kind, invoke, toBackend, usage);
    }

    /** The endpoint's name in metric tags and log lines. */
    public String name() {
        return api.tag();
    }

    /**
     * Whether a call answers in one piece (a {@link WholeAnswer}: a non-streaming request sent on as it
     * is to a backend that {@link #answersWhole answers whole}).
     */
    public boolean whole() {
        return switch (kind) {
            case WHOLE, JSON -> true;
            case CHAT, CHAT_EVENTS, PROTOCOL_EVENTS, COMPLETION -> false;
        };
    }

    /** Whether a backend with {@code capabilities} can serve this call. */
    public boolean supports(BackendCapabilities capabilities) {
        return api.servedBy(capabilities);
    }

    /** Whether {@code backend} can relay a streamed chat answer as its server's events. */
    public static boolean streamsEvents(InferenceBackend backend) {
        return backend instanceof ChatEventStreams;
    }

    /** Whether a non-streaming request can go to {@code backend} as it is, its answer passed on whole. */
    public static boolean answersWhole(InferenceBackend backend) {
        return backend instanceof WholeAnswers;
    }

    /** Calls the backend (a method that throws instead of signalling: see {@link UpstreamCall}). */
    Flux<T> call(RouteTarget target, R request) {
        return invoke.apply(target.backend(), toBackend.apply(request, target.backendModel()));
    }

    boolean supports(InferenceBackend backend) {
        return supports(backend.describe().capabilities());
    }
}
