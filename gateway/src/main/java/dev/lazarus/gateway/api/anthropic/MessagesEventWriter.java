package dev.lazarus.gateway.api.anthropic;

import dev.lazarus.backend.api.ProtocolEvent;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.gateway.api.ErrorMapper;
import dev.lazarus.gateway.api.NamedEventWriter;
import dev.lazarus.gateway.api.NamedEventWriter.NamedEvent;
import dev.lazarus.gateway.routing.ProtocolPiece;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * Writes a chat chunk stream as a Messages event stream, the events a chunk becomes in one buffer; or passes on the
 * events of a backend that serves Messages natively, with the gateway's identity. The framing, the header timing and
 * the backpressure are {@link NamedEventWriter}'s. The response commits with the first event, so a failure before it
 * (an unknown model, every backend down) is still an HTTP error in Anthropic's shape; after it, an {@code error} event
 * ends the stream, as Anthropic's do.
 */
public final class MessagesEventWriter {

    private final NamedEventWriter events;
    private final ErrorMapper errors;

    public MessagesEventWriter(JsonMapper json, ErrorMapper errors) {
        this.events = new NamedEventWriter(json);
        this.errors = errors;
    }

    /**
     * @param pieces  chat chunks to translate, or the events of a backend that serves Messages natively
     * @param identity the gateway's identity written into a native event, where it has one
     * @param headers sets the headers that depend on the answer, run once before the first event (or the failure)
     */
    public Mono<Void> write(ServerHttpResponse response, Flux<ProtocolPiece> pieces,
            Supplier<MessagesStreamTranslator> translators, UnaryOperator<ProtocolEvent> identity, Runnable headers,
            ServerHttpRequest request) {
        Flux<List<? extends NamedEvent>> groups = Flux.defer(() -> {
            MessagesStreamTranslator translator = translators.get();
            // Native events that went out: unless a cut stream goes on as chat, the server's own end closes it.
            List<ProtocolEvent> passed = new ArrayList<>();
            boolean[] translated = {false};
            return pieces.<List<? extends NamedEvent>>handle((piece, sink) -> {
                        switch (piece) {
                            case ProtocolPiece.Chunk(ChatCompletionChunk chunk) -> {
                                if (!translated[0] && !passed.isEmpty()) {
                                    translator.resumeAfter(passed);
                                }
                                translated[0] = true;
                                sink.next(translator.onChunk(chunk));
                            }
                            case ProtocolPiece.Events relayed -> {
                                // what a resume goes on from: the message and its blocks, not their deltas
                                relayed.events().stream().filter(e -> !e.name().equals("content_block_delta"))
                                        .forEach(passed::add);
                                sink.next(passedOn(relayed.events(), identity));
                            }
                            case ProtocolPiece.Whole whole ->
                                    sink.error(new IllegalStateException("a whole answer in a stream"));
                        }
                    })
                    .concatWith(Mono.fromSupplier(() -> translated[0] || passed.isEmpty() ? translator.finish() : List.of()))
                    .onErrorResume(error -> translator.started() || !passed.isEmpty()
                            ? Mono.just(List.of(errorEvent(error, request))) : Flux.error(error));
        });
        return events.writeGroups(response, groups, headers);
    }

    private static List<NamedEvent> passedOn(List<ProtocolEvent> relayed, UnaryOperator<ProtocolEvent> identity) {
        List<NamedEvent> out = new ArrayList<>(relayed.size());
        for (ProtocolEvent event : relayed) {
            ProtocolEvent written = identity.apply(event);
            out.add(new NamedEventWriter.Event(written.name(), written.data()));
        }
        return out;
    }

    private MessagesEvent errorEvent(Throwable error, ServerHttpRequest request) {
        return new MessagesEvent("error", AnthropicErrors.body(errors.map(error, request)));
    }
}
