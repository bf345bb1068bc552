package dev.lazarus.llamacpp;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendConfigException;
import dev.lazarus.backend.api.ChatProtocol;
import dev.lazarus.backend.api.JsonEndpoint;
import dev.lazarus.backend.api.ProtocolMode;
import dev.lazarus.llamacpp.http.ClientSettings;
import dev.lazarus.llamacpp.http.StreamReuse;
import dev.lazarus.llamacpp.process.Supervision;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * A llama.cpp backend's settings, read once from its {@link BackendConfig}. Every key is described
 * in the module's README. {@link #supervision()} is null when the backend only talks to a server
 * someone else runs.
 *
 * @param baseUrl           where llama-server listens, without a trailing slash
 * @param modelName         the model id to report and send; null to ask the server
 * @param apiKey            sent as {@code Authorization: Bearer}; null for none. Never logged.
 * @param connectTimeout    TCP connect
 * @param firstTokenTimeout from sending the request to the first streamed chunk (includes prompt processing)
 * @param idleTimeout       the longest gap allowed between two streamed chunks
 * @param healthTimeout     for the cheap {@code /health}, {@code /props}, {@code /slots} calls
 * @param maxConnections    size of the upstream connection pool
 * @param poolMaxIdleTime   how long an idle pooled connection is kept
 * @param reuseStreamConnections whether a connection that carried a streamed answer goes back to the
 *                          pool ({@link StreamReuse}): true, false ({@code Connection: close} with streamed
 *                          requests), or auto (kept until the server ends one itself)
 * @param assistantPrefill  whether the server continues a trailing assistant message ({@code auto}: until it refuses one)
 * @param kind              {@code llamacpp}, or {@code openai} for any other OpenAI-compatible server
 *                          (vLLM, SGLang, a hosted API): no llama.cpp endpoints, other defaults
 * @param healthPath        what the health check GETs ({@code /health}; {@code openai}: {@code /v1/models})
 * @param modelIdentity     names the model for token-exact continuation ({@link ModelIdentity}): {@code auto}
 *                          (derived from the server's facts), {@code none}, or the operator's name for it
 * @param jsonEndpoints     the {@link JsonEndpoint}s passed on to the server's own ({@code endpoints}): by default
 *                          all four for llama-server (embeddings and rerank answer only when it was started with
 *                          {@code --embeddings}/{@code --reranking}), embeddings for other servers
 * @param protocols         how each {@link ChatProtocol} is served ({@code messages}, {@code responses}: {@code auto}
 *                          (the default: natively until the server answers that it lacks the endpoint), {@code native},
 *                          {@code translate} or {@code off})
 * @param probedProtocols   the protocols set to {@code auto} ({@link ProtocolProbe})
 */
public record LlamaCppSettings(
        String kind,
        String healthPath,
        String baseUrl,
        String modelName,
        String apiKey,
        Duration connectTimeout,
        Duration firstTokenTimeout,
        Duration idleTimeout,
        Duration healthTimeout,
        int maxConnections,
        Duration poolMaxIdleTime,
        StreamReuse.Mode reuseStreamConnections,
        AssistantPrefill.Mode assistantPrefill,
        String modelIdentity,
        Supervision supervision,
        Set<JsonEndpoint> jsonEndpoints,
        Map<ChatProtocol, ProtocolMode> protocols,
        Set<ChatProtocol> probedProtocols) {

    /** The kind of a llama-server. */
    public static final String LLAMACPP = "llamacpp";
    /** The kind of any OpenAI-compatible server that is not llama-server. */
    public static final String OPENAI = "openai";

    public static LlamaCppSettings from(BackendConfig config) {
        boolean openAi = OPENAI.equals(config.kind());
        if (openAi && config.has("binary")) {
            throw new BackendConfigException(config.id(), "binary",
                    "setting 'binary' starts a llama-server: use kind 'llamacpp' for that");
        }
        Supervision supervision = config.has("binary") ? supervision(config) : null;
        String url;
        if (config.has("url")) {
            url = validUrl(config, config.requireString("url"));
        } else if (supervision != null) {
            String host = supervision.host().equals("0.0.0.0") ? "127.0.0.1" : supervision.host();
            url = "http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + supervision.port();
        } else {
            throw new BackendConfigException(config.id(), "url",
                    "setting 'url' is required (or 'binary' to let the backend start llama-server itself)");
        }
        Duration firstToken = positive(config, "first-token-timeout", Duration.ofSeconds(120));
        String healthPath = config.string("health-path", openAi ? "/v1/models" : "/health").strip();
        if (!healthPath.startsWith("/")) {
            throw new BackendConfigException(config.id(), "health-path",
                    "setting 'health-path' must start with '/', got '" + healthPath + "'");
        }
        return new LlamaCppSettings(
                openAi ? OPENAI : LLAMACPP,
                healthPath,
                url,
                blankToNull(config.string("model-name", null)),
                blankToNull(config.string("api-key", null)),
                positive(config, "connect-timeout", Duration.ofSeconds(5)),
                firstToken,
                positive(config, "idle-timeout", Duration.ofSeconds(30)),
                positive(config, "health-timeout", Duration.ofSeconds(5)),
                atLeast(config, "max-connections", 16, 1),
                positive(config, "pool-max-idle-time", Duration.ofSeconds(3)),
                // llama-server ends the connection after each streamed answer, unannounced (b11669), a proxy
                // in front of it may not; other servers keep it, and a hosted API's TLS handshake is worth keeping.
                streamReuse(config, openAi ? "true" : "auto"),
                // vLLM and hosted APIs take a trailing assistant message as a finished turn, and answer
                // anew without a 400: a continuation there would repeat text, so it is opt-in.
                prefillMode(config, openAi ? "false" : "auto"),
                // Token-exact continuation is llama-server's /completion: other servers never take part.
                openAi ? ModelIdentity.NONE : config.string("model-identity", ModelIdentity.AUTO).strip(),
                supervision,
                jsonEndpoints(config, openAi),
                protocols(config),
                probed(config));
    }

    /** Whether this is a llama-server, with its own endpoints ({@code /props}, {@code /slots}). */
    public boolean llamaServer() {
        return !OPENAI.equals(kind);
    }

    /** How log lines and errors name the server. */
    public String serverName() {
        return llamaServer() ? "llama-server" : "the OpenAI-compatible server";
    }

    public boolean supervised() {
        return supervision != null;
    }

    /** What the HTTP client needs of these settings. */
    public ClientSettings client() {
        return new ClientSettings(kind, serverName(), baseUrl, apiKey, connectTimeout, firstTokenTimeout, idleTimeout,
                healthTimeout, maxConnections, poolMaxIdleTime, reuseStreamConnections);
    }

    /** Never prints the api key. */
    @Override
    public String toString() {
        return "LlamaCppSettings[kind=" + kind + ", url=" + baseUrl + ", model-name=" + modelName + ", api-key="
                + (apiKey == null ? "none" : "***") + ", supervised=" + supervised() + "]";
    }

    /** {@code endpoints}: a list of {@code embeddings}, {@code rerank}, {@code tokenize}, {@code detokenize}. */
    private static Set<JsonEndpoint> jsonEndpoints(BackendConfig config, boolean openAi) {
        if (!config.has("endpoints")) {
            return openAi ? EnumSet.of(JsonEndpoint.EMBEDDINGS) : EnumSet.allOf(JsonEndpoint.class);
        }
        Set<JsonEndpoint> endpoints = EnumSet.noneOf(JsonEndpoint.class);
        for (String name : config.strings("endpoints")) {
            String value = name.strip();
            try {
                endpoints.add(JsonEndpoint.valueOf(value.toUpperCase(Locale.ROOT)));
            } catch (IllegalArgumentException e) {
                throw new BackendConfigException(config.id(), "endpoints", "setting 'endpoints' takes embeddings, "
                        + "rerank, tokenize and detokenize, got '" + value + "'");
            }
        }
        return endpoints;
    }

    /**
     * {@code messages} and {@code responses}: {@code auto} (the default), {@code native}, {@code translate} or
     * {@code off}. Auto passes the protocol through until the server shows it lacks the endpoint ({@link ProtocolProbe}).
     */
    private static Map<ChatProtocol, ProtocolMode> protocols(BackendConfig config) {
        Map<ChatProtocol, ProtocolMode> modes = new EnumMap<>(ChatProtocol.class);
        for (ChatProtocol protocol : ChatProtocol.values()) {
            String key = protocol.name().toLowerCase(Locale.ROOT);
            String value = config.string(key, AUTO).strip();
            if (value.equalsIgnoreCase(AUTO)) {
                modes.put(protocol, ProtocolMode.NATIVE); // until the server answers that it has no such endpoint
                continue;
            }
            try {
                modes.put(protocol, ProtocolMode.valueOf(value.toUpperCase(Locale.ROOT)));
            } catch (IllegalArgumentException e) {
                throw new BackendConfigException(config.id(), key, "setting '" + key
                        + "' takes native, translate, off or auto, got '" + value + "'");
            }
        }
        return modes;
    }

    private static final String AUTO = "auto";

    /** The protocols whose setting is {@code auto}. */
    private static Set<ChatProtocol> probed(BackendConfig config) {
        Set<ChatProtocol> probed = EnumSet.noneOf(ChatProtocol.class);
        for (ChatProtocol protocol : ChatProtocol.values()) {
            if (config.string(protocol.name().toLowerCase(Locale.ROOT), AUTO).strip().equalsIgnoreCase(AUTO)) {
                probed.add(protocol);
            }
        }
        return probed;
    }

    private static Supervision supervision(BackendConfig config) {
        int port = config.integer("port", 0);
        if (port < 0 || port > 65535) {
            throw new BackendConfigException(config.id(), "port", "setting 'port' must be between 1 and 65535, got " + port);
        }
        String host = config.string("host", "127.0.0.1");
        Duration backoff = positive(config, "restart-backoff", Duration.ofSeconds(1));
        Duration backoffMax = positive(config, "restart-backoff-max", Duration.ofMinutes(1));
        if (backoffMax.compareTo(backoff) < 0) {
            throw new BackendConfigException(config.id(), "restart-backoff-max",
                    "setting 'restart-backoff-max' must not be shorter than 'restart-backoff'");
        }
        return new Supervision(
                config.requireString("binary"),
                config.strings("command-prefix"),
                blankToNull(config.string("model", null)),
                atLeast(config, "ctx-size", 0, 0),
                atLeast(config, "threads", 0, 0),
                atLeast(config, "gpu-layers", -1, -1),
                atLeast(config, "n-cpu-moe", -1, -1),
                host,
                port == 0 ? freePort(host) : port,
                config.strings("extra-args"),
                positive(config, "startup-timeout", Duration.ofMinutes(10)),
                positive(config, "health-poll-interval", Duration.ofMillis(250)),
                backoff,
                backoffMax,
                positive(config, "stop-grace-period", Duration.ofSeconds(10)));
    }

    private static StreamReuse.Mode streamReuse(BackendConfig config, String defaultMode) {
        String value = config.string("reuse-stream-connections", defaultMode);
        StreamReuse.Mode mode = StreamReuse.parse(value);
        if (mode == null) {
            throw new BackendConfigException(config.id(), "reuse-stream-connections",
                    "setting 'reuse-stream-connections' must be auto, true or false, got '" + value + "'");
        }
        return mode;
    }

    private static AssistantPrefill.Mode prefillMode(BackendConfig config, String defaultMode) {
        String value = config.string("assistant-prefill", defaultMode).strip().toUpperCase(java.util.Locale.ROOT);
        try {
            return AssistantPrefill.Mode.valueOf(value);
        } catch (IllegalArgumentException e) {
            throw new BackendConfigException(config.id(), "assistant-prefill",
                    "setting 'assistant-prefill' must be auto, true or false, got '" + config.string("assistant-prefill", "") + "'");
        }
    }

    private static String validUrl(BackendConfig config, String url) {
        try {
            URI uri = URI.create(url.trim());
            if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) || uri.getHost() == null) {
                throw new IllegalArgumentException("not an http(s) URL");
            }
        } catch (IllegalArgumentException e) {
            throw new BackendConfigException(config.id(), "url",
                    "setting 'url' must be an http(s) URL such as http://127.0.0.1:8081, got '" + url + "'");
        }
        String trimmed = url.trim();
        return trimmed.endsWith("/") ? trimmed.substring(0, trimmed.length() - 1) : trimmed;
    }

    /** Asks the OS for a free port once; the same port is kept across restarts so the URL stays stable. */
    private static int freePort(String host) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(InetAddress.getByName(host), 0));
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free port on " + host, e);
        }
    }

    private static Duration positive(BackendConfig config, String key, Duration defaultValue) {
        Duration d = config.duration(key, defaultValue);
        if (d.isNegative() || d.isZero()) {
            throw new BackendConfigException(config.id(), key, "setting '" + key + "' must be positive, got " + d);
        }
        return d;
    }

    private static int atLeast(BackendConfig config, String key, int defaultValue, int min) {
        int v = config.integer(key, defaultValue);
        if (v < min) {
            throw new BackendConfigException(config.id(), key, "setting '" + key + "' must be at least " + min + ", got " + v);
        }
        return v;
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }
}
