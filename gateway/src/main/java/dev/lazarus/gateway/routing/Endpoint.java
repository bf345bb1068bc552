package dev.lazarus.gateway.routing;

import dev.lazarus.backend.api.BackendCapabilities;
import dev.lazarus.backend.api.ChatEventStreams;
import dev.lazarus.backend.api.InferenceBackend;
import dev.lazarus.backend.api.WholeAnswer;
import dev.lazarus.backend.api.WholeAnswers;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatEvents;
import dev.lazarus.backend.api.openai.Completion;
import dev.lazarus.backend.api.openai.CompletionRequest;
import dev.lazarus.backend.api.openai.Usage;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Predicate;
import reactor.core.publisher.Flux;

/**
 * One kind of backend call (chat or legacy completion), described once so that the attempt loop,
 * decorators and metering stay generic over the request and chunk types.
 *
 * @param name      short name for logs and metric tags
 * @param invoke    starts the call on a backend
 * @param toBackend the request as a backend receives it: its own model name, always streamed with usage
 * @param usage     the usage a chunk carries, or null
 * @param supported whether a backend with these capabilities can serve this kind of call
 * @param whole     whether a call answers in one piece (a {@link WholeAnswer}: a non-streaming request
 *                  sent on as it is to a backend that {@link #answersWhole answers whole})
 * @param <R>       request type
 * @param <T>       chunk type
 */
public record Endpoint<R, T>(
        String name,
        BiFunction<InferenceBackend, R, Flux<T>> invoke,
        BiFunction<R, String, R> toBackend,
        Function<T, Usage> usage,
        Predicate<BackendCapabilities> supported,
        boolean whole) {

    public static final Endpoint<ChatCompletionRequest, ChatCompletionChunk> CHAT = new Endpoint<>(
            "chat",
            InferenceBackend::chat,
            (request, model) -> request.withModel(model).asUsageStream(),
            ChatCompletionChunk::usage,
            capabilities -> true,
            false);

    /**
     * A streamed chat answer relayed as its server's events ({@link ChatEvents}) from a backend that can
     * ({@link ChatEventStreams}); the router plans it only for a route with one candidate left, whose
     * answer is never continued elsewhere (see {@link Router#chatEvents}).
     */
    public static final Endpoint<ChatCompletionRequest, ChatEvents> CHAT_EVENTS = new Endpoint<>(
            "chat",
            (backend, request) -> ((ChatEventStreams) backend).chatEvents(request),
            (request, model) -> request.withModel(model).asUsageStream(),
            ChatEvents::lastUsage,
            capabilities -> true,
            false);

    public static final Endpoint<CompletionRequest, Completion> COMPLETION = new Endpoint<>(
            "completion",
            InferenceBackend::completion,
            (request, model) -> request.withModel(model).asUsageStream(),
            Completion::usage,
            BackendCapabilities::completions,
            false);

    /** A non-streaming chat request to backends that answer whole: the request as the client sent it. */
    public static final Endpoint<ChatCompletionRequest, WholeAnswer> CHAT_WHOLE = new Endpoint<>(
            "chat",
            (backend, request) -> ((WholeAnswers) backend).chatWhole(request).flux(),
            ChatCompletionRequest::withModel,
            WholeAnswer::usage,
            capabilities -> true,
            true);

    /** A non-streaming legacy completion to backends that answer whole. */
    public static final Endpoint<CompletionRequest, WholeAnswer> COMPLETION_WHOLE = new Endpoint<>(
            "completion",
            (backend, request) -> ((WholeAnswers) backend).completionWhole(request).flux(),
            CompletionRequest::withModel,
            WholeAnswer::usage,
            BackendCapabilities::completions,
            true);

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
        return supported.test(backend.describe().capabilities());
    }
}
