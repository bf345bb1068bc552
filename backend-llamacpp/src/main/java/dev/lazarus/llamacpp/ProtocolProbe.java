package dev.lazarus.llamacpp;

import dev.lazarus.backend.api.ChatProtocol;
import dev.lazarus.backend.api.ProtocolMode;
import dev.lazarus.llamacpp.http.LlamaServerClient;
import java.util.EnumMap;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * How a backend serves each {@link ChatProtocol} where its settings leave it to the server ({@code auto}): translated
 * until a probe finds that the server has the protocol's own endpoint, natively from then on. The probe POSTs an
 * empty object, which a server with the endpoint refuses as a bad request (no generation) and one without answers 404
 * (405, 501). Protocols the settings name keep their mode.
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
