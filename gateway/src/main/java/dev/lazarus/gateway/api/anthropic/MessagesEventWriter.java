package dev.lazarus.gateway.api.anthropic;

import dev.lazarus.backend.api.ProtocolEvent;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.gateway.api.ApiError;
import dev.lazarus.gateway.api.ErrorMapper;
import dev.lazarus.gateway.routing.ProtocolPiece;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * Writes a chat chunk stream as a Messages event stream ({@code event: name\ndata: {json}\n\n}), the events a chunk
 * becomes in one buffer; or passes on the events of a backend that serves Messages natively, with the gateway's
 * identity. The response commits with the first event, so a failure before it (an unknown model, every
 * backend down) is still an HTTP error in Anthropic's shape; after it, an {@code error} event ends the stream, as
 * Anthropic's do.
 */
public final class MessagesEventWriter {

    private static final MediaType EVENT_STREAM = new MediaType("text", "event-stream", StandardCharsets.UTF_8);
    private static final byte[] EVENT = "event: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] DATA = "\ndata: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] EVENT_END = "\n\n".getBytes(StandardCharsets.US_ASCII);

    private final JsonMapper json;
    private final ErrorMapper errors;

    public MessagesEventWriter(JsonMapper json, ErrorMapper errors) {
        this.json = json;
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
        response.setStatusCode(HttpStatus.OK);
        response.getHeaders().setContentType(EVENT_STREAM);
        response.getHeaders().setCacheControl("no-cache");
        response.getHeaders().set("X-Accel-Buffering", "no");
        DataBufferFactory buffers = response.bufferFactory();
        Flux<DataBuffer> events = Flux.defer(() -> {
            MessagesStreamTranslator translator = translators.get();
            boolean[] passed = {false}; // native events went out: the server's own end closes the stream
            return pieces.<DataBuffer>handle((piece, sink) -> {
                        switch (piece) {
                            case ProtocolPiece.Chunk(ChatCompletionChunk chunk) -> {
                                boolean first = !translator.started();
                                List<MessagesEvent> out = translator.onChunk(chunk);
                                if (first && translator.started()) {
                                    headers.run();
                                }
                                if (!out.isEmpty()) {
                                    sink.next(write(buffers, out));
                                }
                            }
                            case ProtocolPiece.Events relayed -> {
                                if (!passed[0]) {
                                    passed[0] = true;
                                    headers.run();
                                }
                                sink.next(writeNative(buffers, relayed.events(), identity));
                            }
                            case ProtocolPiece.Whole whole ->
                                    sink.error(new IllegalStateException("a whole answer in a stream"));
                        }
                    })
                    .concatWith(Mono.fromSupplier(() -> {
                        if (passed[0]) {
                            return null; // nothing more
                        }
                        if (!translator.started()) {
                            headers.run();
                        }
                        return write(buffers, translator.finish());
                    }))
                    .onErrorResume(error -> {
                        if (!translator.started() && !passed[0]) {
                            headers.run();
                            return Flux.error(error);
                        }
                        ApiError mapped = errors.map(error, request);
                        MessagesEvent event = new MessagesEvent("error", AnthropicErrors.body(mapped));
                        return Mono.just(write(buffers, List.of(event)));
                    });
        });
        return response.writeWith(events);
    }

    private static DataBuffer writeNative(DataBufferFactory buffers, List<ProtocolEvent> events,
            UnaryOperator<ProtocolEvent> identity) {
        DataBuffer buffer = buffers.allocateBuffer(256 * events.size());
        for (ProtocolEvent event : events) {
            ProtocolEvent written = identity.apply(event);
            buffer.write(EVENT);
            buffer.write(written.name().getBytes(StandardCharsets.UTF_8));
            buffer.write(DATA);
            buffer.write(written.data());
            buffer.write(EVENT_END);
        }
        return buffer;
    }

    private DataBuffer write(DataBufferFactory buffers, List<MessagesEvent> events) {
        DataBuffer buffer = buffers.allocateBuffer(256 * events.size());
        for (MessagesEvent event : events) {
            buffer.write(EVENT);
            buffer.write(event.name().getBytes(StandardCharsets.US_ASCII));
            buffer.write(DATA);
            json.writeValue(buffer.asOutputStream(), event.data());
            buffer.write(EVENT_END);
        }
        return buffer;
    }
}
