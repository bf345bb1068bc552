package dev.lazarus.llamacpp.http;

import java.time.Duration;

/**
 * What {@link LlamaServerClient} needs of a backend's settings (described there, in
 * {@code LlamaCppSettings}). Never printed: it holds the api key.
 *
 * @param kind       names the connection pools
 * @param serverName how log lines and errors name the server
 */
public record ClientSettings(
        String kind,
        String serverName,
        String baseUrl,
        String apiKey,
        Duration connectTimeout,
        Duration firstTokenTimeout,
        Duration idleTimeout,
        Duration healthTimeout,
        int maxConnections,
        Duration poolMaxIdleTime,
        StreamReuse.Mode reuseStreamConnections) {

    @Override
    public String toString() {
        return "ClientSettings[kind=" + kind + ", url=" + baseUrl + "]";
    }
}
