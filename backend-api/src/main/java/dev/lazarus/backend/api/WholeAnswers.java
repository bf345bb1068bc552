package dev.lazarus.backend.api;

import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.CompletionRequest;
import reactor.core.publisher.Mono;

/**
 * A backend whose server answers a non-streaming request in one piece (an OpenAI-compatible HTTP
 * server): the gateway sends a client's non-streaming request on as it is and passes the answer
 * through, instead of streaming it and putting the answer together again. Failures are signalled as
 * {@link BackendException}s, as for streams.
 */
public interface WholeAnswers {

    /** {@code request} is non-streaming, with the backend's own model name. */
    Mono<WholeAnswer> chatWhole(ChatCompletionRequest request);

    /** {@code request} is non-streaming, with the backend's own model name. */
    Mono<WholeAnswer> completionWhole(CompletionRequest request);
}
