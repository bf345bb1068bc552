package dev.lazarus.backend.api;

import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatEvents;
import reactor.core.publisher.Flux;

/**
 * A backend that can relay a streamed chat answer as its server's bytes ({@link ChatEvents}), read only
 * for what the gateway meters and judges, instead of one typed chunk per event. Same contract as
 * {@link InferenceBackend#chat}, except for the element type: the stream's events in the pieces they
 * came in, the last carrying the usage event, failures as {@link BackendException}.
 */
public interface ChatEventStreams {

    Flux<ChatEvents> chatEvents(ChatCompletionRequest request);
}
