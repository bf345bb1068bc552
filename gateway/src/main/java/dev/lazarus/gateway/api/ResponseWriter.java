package dev.lazarus.gateway.api;

import dev.lazarus.backend.api.WholeAnswer;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatEvent;
import dev.lazarus.backend.api.openai.ChatEvents;
import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.core.io.JsonStringEncoder;
import tools.jackson.databind.json.JsonMapper;

/**
 * Writes responses straight to the connection: a JSON body, a backend's whole answer, or an OpenAI
 * event stream ({@code data: {json}\n\n} per chunk, then {@code data: [DONE]\n\n}). A chunk as its
 * server wrote it goes out as those bytes with the response's id and model written over the server's
 * (and its {@code created}, where the server wrote none as OpenAI does: the response keeps the first
 * server's, so a relayed event the gateway does not change differs from the server's in id and model
 * alone); any other is serialised exactly once, into the buffer that goes out. The response is committed
 * with the first chunk, so a failure before it still becomes a proper HTTP error; a failure after
 * it becomes an error event
 * followed by {@code [DONE]}.
 */
public final class ResponseWriter {

    static final MediaType EVENT_STREAM = new MediaType("text", "event-stream", StandardCharsets.UTF_8);
    private static final byte[] DATA = "data: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] EVENT_END = "\n\n".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] DONE = "data: [DONE]\n\n".getBytes(StandardCharsets.US_ASCII);

    private final JsonMapper json;
    private final ErrorMapper errors;

    public ResponseWriter(JsonMapper json, ErrorMapper errors) {
        this.json = json;
        this.errors = errors;
    }

    /** @param headers sets the headers that depend on the answer, run once the answer came (or failed) */
    public Mono<Void> json(ServerHttpResponse response, Mono<?> body, Runnable headers) {
        response.setStatusCode(HttpStatus.OK);
        response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
        return response.writeWith(body.doOnError(error -> headers.run()).map(value -> {
            headers.run();
            DataBuffer buffer = response.bufferFactory().allocateBuffer(1024);
            json.writeValue(buffer.asOutputStream(), value);
            return buffer;
        }));
    }

    /**
     * A whole answer as its backend's server wrote it, with the response's identity written over the
     * server's own ({@code identity} is asked once the answer came: the model that answered is known then).
     *
     * @param headers sets the headers that depend on the answer, run once it came, before the response commits
     */
    public Mono<Void> whole(ServerHttpResponse response, Mono<WholeAnswer> answer, Supplier<ResponseIdentity> identity,
            Runnable headers) {
        response.setStatusCode(HttpStatus.OK);
        response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
        return response.writeWith(answer.map(whole -> {
            headers.run();
            long serverCreated = whole.json().wholeSecondsCreated();
            ResponseIdentity id = serverCreated < 0 ? identity.get() : identity.get().withCreated(serverCreated);
            byte[] body = whole.json().withIdentity(jsonString(id.id()),
                    Long.toString(id.created()).getBytes(StandardCharsets.US_ASCII), jsonString(id.model()));
            return response.bufferFactory().wrap(body);
        }));
    }

    /**
     * A string as a JSON string's bytes, quoted as the mapper quotes it, without the generator and buffers the
     * mapper's {@code writeValueAsBytes} sets up for each value (~2 % of a relayed whole answer's CPU, JFR).
     */
    static byte[] jsonString(String value) {
        byte[] quoted = JsonStringEncoder.getInstance().quoteAsUTF8(value);
        byte[] text = new byte[quoted.length + 2];
        text[0] = '"';
        System.arraycopy(quoted, 0, text, 1, quoted.length);
        text[text.length - 1] = '"';
        return text;
    }

    /**
     * A chat answer's event stream from the pieces it came in: each piece's events written into one
     * buffer, a raw event as its server's bytes with the response's identity written over, a typed one
     * shaped as {@link ChunkShape#CHAT} shapes it; the usage event only where the client asked for it.
     */
    public Mono<Void> chatEvents(ServerHttpRequest request, ServerHttpResponse response, Flux<ChatEvents> pieces,
            Supplier<ResponseIdentity> identity, boolean includeUsage, Runnable headers) {
        return eventStream(request, response, pieces, (buffers, value, bytes) -> value instanceof ChatEvents events
                ? piece(buffers, events, identity.get(), includeUsage, bytes) : event(buffers, value, bytes), headers);
    }

    /** @param headers sets the headers that depend on the answer, run once before the first event (or the failure) */
    public Mono<Void> eventStream(ServerHttpRequest request, ServerHttpResponse response, Flux<?> chunks,
            Runnable headers) {
        return eventStream(request, response, chunks, this::event, headers);
    }

    /** Writes what one element of a stream becomes: its event or events, in one buffer (null: none). */
    @FunctionalInterface
    private interface EventWriter {
        DataBuffer write(DataBufferFactory buffers, Object value, IdentityBytes identity);
    }

    private Mono<Void> eventStream(ServerHttpRequest request, ServerHttpResponse response, Flux<?> chunks,
            EventWriter writer, Runnable headers) {
        response.setStatusCode(HttpStatus.OK);
        response.getHeaders().setContentType(EVENT_STREAM);
        response.getHeaders().setCacheControl("no-cache");
        // Tells nginx-style proxies in front of the gateway not to buffer the stream.
        response.getHeaders().set("X-Accel-Buffering", "no");
        DataBufferFactory buffers = response.bufferFactory();
        Flux<DataBuffer> events = Flux.defer(() -> {
            boolean[] started = {false};
            IdentityBytes identity = new IdentityBytes();
            return chunks.<DataBuffer>handle((chunk, sink) -> {
                        DataBuffer event = writer.write(buffers, chunk, identity);
                        if (event != null) {
                            if (!started[0]) {
                                started[0] = true;
                                headers.run();
                            }
                            sink.next(event);
                        }
                    })
                    .concatWith(Mono.fromSupplier(() -> {
                        if (!started[0]) {
                            headers.run();
                        }
                        return buffers.wrap(DONE);
                    }))
                    .onErrorResume(error -> {
                        if (started[0]) {
                            return Flux.just(event(buffers, errors.map(error, request).body(), identity), buffers.wrap(DONE));
                        }
                        headers.run();
                        return Flux.error(error);
                    });
        });
        // writeWith, not a flush per event (writeAndFlushWith of one Mono per event): the connection is
        // flushed whenever the events that came together are written (reactor-netty flushes when its queue
        // runs dry), so an event still goes out as soon as it comes, and a burst costs one write instead of
        // one per event and no inner subscription per event. The gate reads the source no faster than the
        // client takes the events.
        return response.writeWith(WriteGate.of(response, events));
    }

    /** A piece's events in one buffer, or null when none of them is for the client. */
    private DataBuffer piece(DataBufferFactory buffers, ChatEvents events, ResponseIdentity requested,
            boolean includeUsage, IdentityBytes identity) {
        ResponseIdentity id = identity.adopt(requested, events);
        DataBuffer buffer = null;
        for (ChatEvent event : events.events()) {
            if (event.isRaw()) {
                // a raw event with usage has no choices (one beside choices is read typed)
                if (event.usage() != null && !includeUsage) {
                    continue;
                }
                buffer = buffer != null ? buffer : buffers.allocateBuffer(512 * events.events().size());
                identity.update(id.id(), id.created(), id.model());
                buffer.write(DATA);
                event.raw().writeWithIdentity(buffer.asOutputStream(), identity.id, identity.created, identity.model);
                buffer.write(EVENT_END);
            } else {
                for (ChatCompletionChunk chunk : ChunkShape.CHAT.shape(event.chunk(), id, includeUsage)) {
                    buffer = buffer != null ? buffer : buffers.allocateBuffer(512 * events.events().size());
                    write(buffer, chunk, identity);
                }
            }
        }
        return buffer;
    }

    /**
     * One event: a chunk that still carries its server's bytes is passed on as those bytes with the
     * response's identity written over the server's; anything else is serialised.
     */
    private DataBuffer event(DataBufferFactory buffers, Object value, IdentityBytes identity) {
        return write(buffers.allocateBuffer(512), value, identity);
    }

    private DataBuffer write(DataBuffer buffer, Object value, IdentityBytes identity) {
        buffer.write(DATA);
        if (value instanceof ChatCompletionChunk chunk && chunk.raw() != null) {
            identity.update(chunk.id(), chunk.created(), chunk.model());
            chunk.raw().writeWithIdentity(buffer.asOutputStream(), identity.id, identity.created, identity.model);
        } else {
            json.writeValue(buffer.asOutputStream(), value);
        }
        buffer.write(EVENT_END);
        return buffer;
    }

    /** One stream's identity as JSON texts, made again only when it changes (a resume may change the model). */
    private final class IdentityBytes {
        private long adoptedCreated = Long.MIN_VALUE;
        private ResponseIdentity requested;
        private ResponseIdentity adopted;
        private String idText;
        private long createdValue = Long.MIN_VALUE;
        private String modelText;
        private byte[] id;
        private byte[] created;
        private byte[] model;

        /**
         * The response's identity with the created time of the stream's first event, where its server wrote one
         * as OpenAI does; fixed by the first piece, so that an answer resumed on another server keeps it.
         */
        ResponseIdentity adopt(ResponseIdentity response, ChatEvents events) {
            if (adoptedCreated == Long.MIN_VALUE) {
                ChatEvent first = events.events().isEmpty() ? null : events.events().getFirst();
                long server = first != null && first.isRaw() ? first.raw().wholeSecondsCreated() : -1;
                adoptedCreated = server >= 0 ? server : response.created();
            }
            if (response != requested) {
                requested = response;
                adopted = response.withCreated(adoptedCreated);
            }
            return adopted;
        }

        void update(String newId, long newCreated, String newModel) {
            if (!newId.equals(idText)) {
                idText = newId;
                id = jsonString(newId);
            }
            if (newCreated != createdValue) {
                createdValue = newCreated;
                created = Long.toString(newCreated).getBytes(StandardCharsets.US_ASCII);
            }
            if (!newModel.equals(modelText)) {
                modelText = newModel;
                model = jsonString(newModel);
            }
        }
    }
}
