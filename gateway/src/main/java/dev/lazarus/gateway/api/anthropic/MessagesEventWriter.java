package dev.lazarus.gateway.api.anthropic;

import dev.lazarus.backend.api.ProtocolEvent;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.gateway.api.ErrorMapper;
import dev.lazarus.gateway.api.NamedEventWriter;
import dev.lazarus.gateway.api.NamedEventWriter.NamedEvent;
import dev.lazarus.gateway.routing.ProtocolPiece;
import dev.lazarus.gateway.api.Awaited;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * Writes a chat chunk stream as a Messages event stream, the events a chunk becomes in one buffer; or passes on the
 * events of a backend that serves Messages natively, with the gateway's identity. The framing, the header timing and
 * the backpressure are {@link NamedEventWriter}'s. The response commits with the first event, so a failure before it
 * (an unknown model, every backend down) is still an HTTP error in Anthropic's shape; after it, an {@code error} event
 * ends the stream, as Anthropic's do. While the backend has not begun its answer (a long prompt being read), the
 * gateway begins the message itself after {@code pingInterval} and sends a {@code ping} every interval; the answer
 * that comes later, from whichever backend of the route, goes on in that message (a native server's own
 * {@code message_start} is left out then, its prompt usage told in {@code message_delta}).
 */
public final class MessagesEventWriter {

    private static final TypeReference<Map<String, Object>> OBJECT = new TypeReference<>() {};

    private final NamedEventWriter events;
    private final ErrorMapper errors;
    private final JsonMapper json;
    private final Duration pingInterval;

    /** @param pingInterval how long a stream waits for its answer before it begins the message and pings; 0: never */
    public MessagesEventWriter(JsonMapper json, ErrorMapper errors, Duration pingInterval) {
        this.events = new NamedEventWriter(json);
        this.errors = errors;
        this.json = json;
        this.pingInterval = pingInterval;
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
            NativeStart nativeStart = new NativeStart();
            return Awaited.ticking(pieces, pingInterval).<List<? extends NamedEvent>>handle((awaited, sink) -> {
                        if (!(awaited instanceof Awaited.Piece<ProtocolPiece>(ProtocolPiece piece))) {
                            sink.next(translator.keepAlive());
                            return;
                        }
                        switch (piece) {
                            case ProtocolPiece.Chunk(ChatCompletionChunk chunk) -> {
                                if (!translated[0] && !passed.isEmpty()) {
                                    translator.resumeAfter(passed);
                                }
                                translated[0] = true;
                                sink.next(translator.onChunk(chunk));
                            }
                            case ProtocolPiece.Events relayed -> {
                                if (passed.isEmpty() && translator.started()) {
                                    nativeStart.begunBefore = true; // the message began while the server read the prompt
                                }
                                // what a resume goes on from: the message and its blocks, not their deltas
                                relayed.events().stream().filter(e -> !e.name().equals("content_block_delta"))
                                        .forEach(passed::add);
                                sink.next(passedOn(relayed.events(), identity, nativeStart));
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

    private List<NamedEvent> passedOn(List<ProtocolEvent> relayed, UnaryOperator<ProtocolEvent> identity,
            NativeStart start) {
        List<NamedEvent> out = new ArrayList<>(relayed.size());
        for (ProtocolEvent event : relayed) {
            if (start.begunBefore && event.name().equals("message_start")) {
                start.usage = usage(json.readValue(event.data(), OBJECT).get("message"));
                continue;
            }
            if (start.usage != null && event.name().equals("message_delta")) {
                event = withPromptUsage(event, start.usage);
            }
            ProtocolEvent written = identity.apply(event);
            out.add(new NamedEventWriter.Event(written.name(), written.data()));
        }
        return out;
    }

    /** A native stream whose message the gateway began while the server read the prompt. */
    private static final class NativeStart {
        boolean begunBefore;
        /** The usage of the server's own {@code message_start}, which the client did not get. */
        Map<String, Object> usage;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> usage(Object message) {
        return message instanceof Map<?, ?> m && m.get("usage") instanceof Map<?, ?> usage
                ? (Map<String, Object>) usage : Map.of();
    }

    /**
     * {@code message_delta} with the prompt's usage of the {@code message_start} left out, where it tells none itself
     * (Anthropic's SDKs take a {@code message_delta}'s {@code input_tokens} and cache counts into the message).
     */
    @SuppressWarnings("unchecked")
    private ProtocolEvent withPromptUsage(ProtocolEvent delta, Map<String, Object> startUsage) {
        Map<String, Object> data = json.readValue(delta.data(), OBJECT);
        Map<String, Object> usage = data.get("usage") instanceof Map<?, ?> u
                ? new LinkedHashMap<>((Map<String, Object>) u) : new LinkedHashMap<>();
        startUsage.forEach((key, value) -> {
            if (!key.equals("output_tokens")) {
                usage.putIfAbsent(key, value);
            }
        });
        data.put("usage", usage);
        return new ProtocolEvent(delta.name(), json.writeValueAsBytes(data));
    }

    private MessagesEvent errorEvent(Throwable error, ServerHttpRequest request) {
        return new MessagesEvent("error", AnthropicErrors.body(errors.map(error, request)));
    }
}
