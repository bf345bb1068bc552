package dev.lazarus.backend.api;

import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.Completion;
import dev.lazarus.backend.api.openai.CompletionRequest;
import java.util.Map;
import java.util.Optional;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * One place that can run completions: a llama-server, the in-JVM engine, an SGLang server.
 *
 * <p>Contract:
 * <ul>
 *   <li>Every call is a stream. The returned Flux is cold: nothing is sent until subscription, and
 *       cancelling the subscription cancels the work (the client went away).</li>
 *   <li>The stream ends with one chunk that carries {@code usage} and has no choices.</li>
 *   <li>Failures are signalled as {@link BackendException} through {@code onError}, never thrown
 *       from the method itself; the exception's {@link BackendErrorKind} tells the gateway whether
 *       another backend could serve the request and whether it counts against this backend.</li>
 *   <li>{@code request.model()} is the backend's own model name (the gateway maps public names).</li>
 * </ul>
 */
public interface InferenceBackend extends AutoCloseable {

    /** The configured id, unique within a gateway. */
    String id();

    /** Kind, served models and capabilities. */
    BackendDescriptor describe();

    /** A cheap check (never a token-spending completion). */
    Mono<BackendHealth> health();

    Flux<ChatCompletionChunk> chat(ChatCompletionRequest request);

    /**
     * Names the model and tokenizer whose token ids this backend records ({@link GeneratedTokens})
     * and continues from ({@link TokenPrefix}); empty when it does neither. A caller offers a record
     * only where another backend of the same identity could use it.
     */
    default Optional<String> tokenIdentity() {
        return Optional.empty();
    }

    Flux<Completion> completion(CompletionRequest request);

    /**
     * Answers a request to one of the {@link JsonEndpoint}s this backend's capabilities list. {@code request}
     * is the client's JSON object (maps, lists, strings, numbers, booleans, nulls), its {@code model} the
     * backend's own name; the answer is the JSON object as the backend's server gave it (the gateway writes
     * the response's {@code model} over the server's).
     * Failures are signalled as for {@link #chat}. Backends that serve none keep this default.
     */
    default Mono<Map<String, Object>> json(JsonEndpoint endpoint, Map<String, Object> request) {
        return Mono.error(BackendException.invalidRequest(
                "backend '" + id() + "' does not serve " + endpoint.path(), "model"));
    }

    /** Releases connections, processes, memory; idempotent. */
    @Override
    void close();
}
