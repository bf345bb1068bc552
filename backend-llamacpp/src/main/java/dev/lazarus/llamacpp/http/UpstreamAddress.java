package dev.lazarus.llamacpp.http;

import java.net.SocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import reactor.netty.http.client.HttpClient;
import reactor.netty.transport.AddressUtils;

/**
 * Where a server listens, parsed once: its client gets host and port, and each request a path
 * relative to them. Reactor Netty matches an absolute URL (what {@code baseUrl} makes of every
 * request's path) against a regular expression per request, some 2 % of a relayed request's CPU; a
 * path starting with {@code /} skips that. A URL this cannot take apart (user info, query) is left to
 * {@code baseUrl} as before.
 *
 * @param prefix the URL's path without its trailing slash, put before every request's path
 */
record UpstreamAddress(String url, String host, int port, boolean secure, String prefix) {

    static UpstreamAddress of(String url) {
        try {
            URI uri = new URI(url);
            String scheme = uri.getScheme();
            boolean secure = "https".equalsIgnoreCase(scheme);
            if (!(secure || "http".equalsIgnoreCase(scheme)) || uri.getHost() == null || uri.getRawUserInfo() != null
                    || uri.getRawQuery() != null || uri.getRawFragment() != null) {
                return whole(url);
            }
            String host = uri.getHost();
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            String path = uri.getRawPath() == null ? "" : uri.getRawPath();
            while (path.endsWith("/")) {
                path = path.substring(0, path.length() - 1);
            }
            return new UpstreamAddress(url, host, uri.getPort() >= 0 ? uri.getPort() : secure ? 443 : 80, secure, path);
        } catch (URISyntaxException e) {
            return whole(url);
        }
    }

    private static UpstreamAddress whole(String url) {
        return new UpstreamAddress(url, null, -1, false, null);
    }

    /**
     * {@code client} aimed at this address: the socket address made once, as {@code host(host).port(port)} would
     * make it again for every request (two addresses and an IP literal parsed, some 1.5 % of a relayed request's
     * CPU); a host name in it is resolved as a connection opens, as before.
     */
    HttpClient aim(HttpClient client) {
        if (host == null) {
            return client.baseUrl(url);
        }
        SocketAddress address = AddressUtils.createUnresolved(host, port);
        HttpClient aimed = client.remoteAddress(() -> address);
        return secure ? aimed.secure() : aimed;
    }

    /** What a request for {@code path} (starting with {@code /}) asks the aimed client for. */
    String path(String path) {
        return prefix == null || prefix.isEmpty() ? path : prefix + path;
    }
}
