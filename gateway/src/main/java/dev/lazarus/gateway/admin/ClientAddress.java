package dev.lazarus.gateway.admin;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.springframework.http.server.reactive.ServerHttpRequest;

/**
 * The address of the client behind a request: the connection's peer, or where that peer is a trusted
 * reverse proxy, the nearest address in {@code X-Forwarded-For} that is not one (the header is the
 * client's to write, so only what trusted proxies appended counts).
 */
final class ClientAddress {

    private final Set<String> trustedProxies;

    ClientAddress(List<String> trustedProxies) {
        this.trustedProxies = trustedProxies.stream().map(ClientAddress::normal).collect(Collectors.toUnmodifiableSet());
    }

    String of(ServerHttpRequest request) {
        InetSocketAddress remote = request.getRemoteAddress();
        String peer = remote == null || remote.getAddress() == null ? "unknown" : remote.getAddress().getHostAddress();
        if (!trustedProxies.contains(peer)) {
            return peer;
        }
        List<String> forwarded = request.getHeaders().getValuesAsList("X-Forwarded-For");
        for (int i = forwarded.size() - 1; i >= 0; i--) {
            String hop = normal(forwarded.get(i));
            if (!trustedProxies.contains(hop)) {
                return hop;
            }
        }
        return peer;
    }

    /** An address as {@link InetAddress#getHostAddress} writes it, when it is a literal one. */
    private static String normal(String address) {
        String trimmed = address.trim();
        if (trimmed.isEmpty() || !trimmed.matches("[0-9a-fA-F:.]+")) {
            return trimmed;
        }
        try {
            return InetAddress.ofLiteral(trimmed).getHostAddress();
        } catch (IllegalArgumentException e) {
            return trimmed;
        }
    }
}
