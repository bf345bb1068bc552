package dev.lazarus.gateway.api.anthropic;

import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.gateway.api.ErrorMapper;
import dev.lazarus.gateway.api.NamedEventWriter;
import java.util.List;
import java.util.function.Supplier;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * Writes a chat chunk stream as a Messages event stream, the events a chunk becomes in one buffer. The response
 * commits with the first event, so a failure before it (an unknown model, every backend down) is still an HTTP error
 * in Anthropic's shape; after it, an {@code error} event ends the stream, as Anthropic's do.
 */
public final class MessagesEventWriter {

    private final NamedEventWriter events;
    private final ErrorMapper errors;

    public MessagesEventWriter(JsonMapper json, ErrorMapper errors) {
        this.events = new NamedEventWriter(json);
        this.errors = errors;
    }

    /** @param headers sets the headers that depend on the answer, run once before the first event (or the failure) */
    public Mono<Void> write(ServerHttpResponse response, Flux<ChatCompletionChunk> chunks,
            Supplier<MessagesStreamTranslator> translators, Runnable headers, ServerHttpRequest request) {
        Flux<List<MessagesEvent>> groups = Flux.defer(() -> {
            MessagesStreamTranslator translator = translators.get();
            return chunks.map(translator::onChunk)
                    .concatWith(Mono.fromSupplier(translator::finish))
                    .onErrorResume(error -> translator.started() ? Mono.just(List.of(errorEvent(error, request)))
                            : Flux.error(error));
        });
        return events.writeGroups(response, groups, headers);
    }

    private MessagesEvent errorEvent(Throwable error, ServerHttpRequest request) {
        return new MessagesEvent("error", AnthropicErrors.body(errors.map(error, request)));
    }
}
