package dev.lazarus.gateway.api;

import java.nio.charset.StandardCharsets;
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
 * Writes responses straight to the connection: a JSON body, or an OpenAI event stream
 * ({@code data: {json}\n\n} per chunk, then {@code data: [DONE]\n\n}). Each chunk is serialised
 * exactly once, into the buffer that goes out. The response is committed with the first chunk, so
 * a failure before it still becomes a proper HTTP error; a failure after it becomes an error event
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

    public Mono<Void> json(ServerHttpResponse response, Mono<?> body) {
        response.setStatusCode(HttpStatus.OK);
        response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
        return response.writeWith(body.map(value -> {
            DataBuffer buffer = response.bufferFactory().allocateBuffer(1024);
            json.writeValue(buffer.asOutputStream(), value);
            return buffer;
        }));
    }

    public Mono<Void> eventStream(ServerHttpRequest request, ServerHttpResponse response, Flux<?> chunks) {
        response.setStatusCode(HttpStatus.OK);
        response.getHeaders().setContentType(EVENT_STREAM);
        response.getHeaders().setCacheControl("no-cache");
        // Tells nginx-style proxies in front of the gateway not to buffer the stream.
        response.getHeaders().set("X-Accel-Buffering", "no");
        DataBufferFactory buffers = response.bufferFactory();
        Flux<DataBuffer> events = Flux.defer(() -> {
            boolean[] started = {false};
            return chunks.map(chunk -> event(buffers, chunk))
                    .doOnNext(buffer -> started[0] = true)
                    .concatWith(Mono.fromSupplier(() -> buffers.wrap(DONE)))
                    .onErrorResume(error -> started[0]
                            ? Flux.just(event(buffers, errors.map(error, request).body()), buffers.wrap(DONE))
                            : Flux.error(error));
        });
        return response.writeAndFlushWith(events.map(Mono::just));
    }

    private DataBuffer event(DataBufferFactory buffers, Object value) {
        DataBuffer buffer = buffers.allocateBuffer(512);
        buffer.write(DATA);
        json.writeValue(buffer.asOutputStream(), value);
        buffer.write(EVENT_END);
        return buffer;
    }
}
