package dev.lazarus.gateway.api;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.server.reactive.ServerHttpResponse;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * Writes an event stream of named events ({@code event: <name>\ndata: <json>\n\n}), as the Responses and
 * Anthropic Messages APIs send them, with no {@code [DONE]} at the end. The response is committed with the
 * first event, so a failure before it still becomes a proper HTTP error; a protocol's failure events after
 * it are the caller's to put into the stream. Like {@link ResponseWriter}'s streams, the events are asked for
 * through a {@link WriteGate}: no faster than the client takes them.
 */
public final class NamedEventWriter {

    /** What an event is written from: its name and the value written as its JSON data (a {@code byte[]}: a server's own JSON, as it is). */
    public interface NamedEvent {
        String name();

        Object data();
    }

    /** One event. */
    public record Event(String name, Object data) implements NamedEvent {}

    /**
     * An SSE comment ({@code : keep-alive}), which every client's event parser skips: it keeps a stream alive that
     * has nothing to tell yet, in a protocol without an event for it.
     */
    public static final NamedEvent KEEP_ALIVE = new Comment();

    private record Comment() implements NamedEvent {
        @Override
        public String name() {
            return "";
        }

        @Override
        public Object data() {
            return null;
        }
    }

    private static final byte[] KEEP_ALIVE_BYTES = ": keep-alive\n\n".getBytes(StandardCharsets.US_ASCII);

    private static final byte[] EVENT = "event: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] DATA = "\ndata: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] END = "\n\n".getBytes(StandardCharsets.US_ASCII);

    private final JsonMapper json;

    public NamedEventWriter(JsonMapper json) {
        this.json = json;
    }

    /**
     * Each group's events in one buffer (the events one chunk became go out in one write); an empty group writes
     * nothing.
     *
     * @param headers sets the headers that depend on the answer, run once before the first event (or the failure)
     */
    public Mono<Void> writeGroups(ServerHttpResponse response, Flux<? extends List<? extends NamedEvent>> groups,
            Runnable headers) {
        response.setStatusCode(HttpStatus.OK);
        response.getHeaders().setContentType(ResponseWriter.EVENT_STREAM);
        response.getHeaders().setCacheControl("no-cache");
        // Tells nginx-style proxies in front of the gateway not to buffer the stream.
        response.getHeaders().set("X-Accel-Buffering", "no");
        DataBufferFactory buffers = response.bufferFactory();
        Flux<DataBuffer> bytes = Flux.defer(() -> {
            boolean[] started = {false};
            return groups.<DataBuffer>handle((group, sink) -> {
                        if (group.isEmpty()) {
                            return;
                        }
                        if (!started[0]) {
                            started[0] = true;
                            headers.run();
                        }
                        sink.next(write(buffers, group));
                    })
                    .doOnTerminate(() -> {
                        // a failure before the first event, or a stream of none: the headers before the commit
                        if (!started[0]) {
                            started[0] = true;
                            headers.run();
                        }
                    });
        });
        return response.writeWith(WriteGate.of(response, bytes));
    }

    private DataBuffer write(DataBufferFactory buffers, List<? extends NamedEvent> events) {
        DataBuffer buffer = buffers.allocateBuffer(256 * events.size());
        for (NamedEvent event : events) {
            if (event instanceof Comment) {
                buffer.write(KEEP_ALIVE_BYTES);
                continue;
            }
            buffer.write(EVENT);
            buffer.write(event.name().getBytes(StandardCharsets.UTF_8));
            buffer.write(DATA);
            if (event.data() instanceof byte[] raw) {
                buffer.write(raw);
            } else {
                json.writeValue(buffer.asOutputStream(), event.data());
            }
            buffer.write(END);
        }
        return buffer;
    }
}
