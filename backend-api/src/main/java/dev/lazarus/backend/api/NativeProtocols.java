package dev.lazarus.backend.api;

import java.util.List;
import java.util.Map;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A backend whose server speaks a {@link ChatProtocol} itself: the gateway sends it the client's request (its
 * {@code model} the backend's own) for the protocols its capabilities mark {@link ProtocolMode#NATIVE}, and passes
 * the answer on. Failures are signalled as {@link BackendException}s, as for {@link InferenceBackend#chat}.
 */
public interface NativeProtocols {

    /** A streamed answer ({@code "stream": true}): its events in the pieces they came in, until the server's end. */
    Flux<List<ProtocolEvent>> protocolEvents(ChatProtocol protocol, Map<String, Object> request);

    /** A non-streamed answer: the JSON object as the server gave it. */
    Mono<Map<String, Object>> protocolAnswer(ChatProtocol protocol, Map<String, Object> request);
}
