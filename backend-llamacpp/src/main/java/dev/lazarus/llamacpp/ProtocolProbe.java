package dev.lazarus.llamacpp;

import dev.lazarus.backend.api.ChatProtocol;
import dev.lazarus.backend.api.ProtocolMode;
import dev.lazarus.backend.api.ProtocolNotServedException;
import dev.lazarus.llamacpp.http.LlamaServerClient;
import dev.lazarus.llamacpp.wire.MissingPathException;
import java.util.EnumMap;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * How a backend serves each {@link ChatProtocol} where its settings leave it to the server ({@code auto}, the default):
 * natively until the server shows that it lacks the protocol's own endpoint, translated from then on. It shows it by
 * answering a request there with 404, 405 or 501 ({@link #notServed}), or a probe: at its first health check the
 * backend POSTs an empty object, which a server with the endpoint refuses as a bad request (no generation) and one
 * without answers as above. Protocols the settings name keep their mode.
 */
final class ProtocolProbe {

    private static final Logger log = LoggerFactory.getLogger(ProtocolProbe.class);

    private final String backendId;
    private final Set<ChatProtocol> auto;
    private volatile Map<ChatProtocol, ProtocolMode> modes;

    ProtocolProbe(String backendId, Map<ChatProtocol, ProtocolMode> configured, Set<ChatProtocol> auto) {
        this.backendId = backendId;
        this.auto = Set.copyOf(auto);
        this.modes = Map.copyOf(configured);
    }

    /** How each protocol is served now. */
    Map<ChatProtocol, ProtocolMode> modes() {
        return modes;
    }

    /** Asks the server about each {@code auto} protocol; a failed probe (the server down) leaves it as it was. */
    Mono<Void> probe(LlamaServerClient client) {
        return Flux.fromIterable(auto)
                .concatMap(protocol -> client.probe(protocol.path(), Map.of())
                        .doOnNext(answer -> learn(protocol, !notServed(answer.status()), "POST " + protocol.path()
                                + " answered " + answer.status()))
                        .onErrorResume(e -> Mono.empty()))
                .then();
    }

    /**
     * A failed request of {@code protocol} passed through to the server: where the server answered that it has no such
     * endpoint and the protocol is left to it, learns to translate it and tells the caller so
     * ({@link ProtocolNotServedException}); any other failure as it is.
     */
    Throwable notServed(ChatProtocol protocol, Throwable error) {
        if (!auto.contains(protocol) || !(error instanceof MissingPathException missing) || missing.unknownModel()) {
            return error;
        }
        String answered = "POST " + protocol.path() + " answered " + missing.status();
        learn(protocol, false, answered);
        return new ProtocolNotServedException(backendId, protocol, "backend '" + backendId + "' does not serve "
                + protocol.path() + " itself (" + answered + "); translated onto its chat completions");
    }

    private static boolean notServed(int status) {
        return status == 404 || status == 405 || status == 501;
    }

    private synchronized void learn(ChatProtocol protocol, boolean served, String why) {
        ProtocolMode mode = served ? ProtocolMode.NATIVE : ProtocolMode.TRANSLATE;
        if (modes.get(protocol) == mode) {
            return;
        }
        Map<ChatProtocol, ProtocolMode> next = new EnumMap<>(modes);
        next.put(protocol, mode);
        modes = Map.copyOf(next);
        log.info("backend '{}': {} {} ({})", backendId, protocol.path(),
                served ? "served natively" : "translated onto chat completions", why);
    }
}
