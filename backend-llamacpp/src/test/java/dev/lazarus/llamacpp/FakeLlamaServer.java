package dev.lazarus.llamacpp;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * A stand-in for llama-server that the supervisor can start in tests, with only the JDK: it takes
 * llama-server's {@code --host}/{@code --port} (ignoring its other flags), answers {@code /health}
 * 503 "Loading model" for {@code --fake-loading-ms} and 200 after, and with {@code --fake-child}
 * starts a {@code sleep} child, as a wrapper script would, so that tree shutdown can be checked.
 */
public final class FakeLlamaServer {

    private FakeLlamaServer() {}

    public static void main(String[] args) throws IOException {
        List<String> a = List.of(args);
        String host = value(a, "--host", "127.0.0.1");
        int port = Integer.parseInt(value(a, "--port", "8080"));
        long loadingMs = Long.parseLong(value(a, "--fake-loading-ms", "0"));
        long readyAt = System.nanoTime() + loadingMs * 1_000_000;

        HttpServer server = HttpServer.create(new InetSocketAddress(host, port), 0);
        server.createContext("/health", ex -> {
            if (System.nanoTime() < readyAt) {
                send(ex, 503, "{\"error\":{\"code\":503,\"message\":\"Loading model\",\"type\":\"unavailable_error\"}}");
            } else {
                send(ex, 200, "{\"status\":\"ok\"}");
            }
        });
        server.createContext("/props", ex -> send(ex, 200,
                "{\"default_generation_settings\":{\"n_ctx\":512},\"total_slots\":1,\"model_path\":\"" + value(a, "-m", "") + "\"}"));
        server.createContext("/v1/models", ex -> send(ex, 200,
                "{\"object\":\"list\",\"data\":[{\"id\":\"" + value(a, "--alias", "fake") + "\",\"object\":\"model\"}]}"));
        server.start();
        if (a.contains("--fake-child")) {
            new ProcessBuilder("sleep", "600").inheritIO().start();
        }
        System.out.println("fake llama-server listening on " + host + ":" + port
                // Not "api-key=...": the supervisor masks whatever follows such a label in the server's output.
                + ", LLAMA_API_KEY " + (System.getenv("LLAMA_API_KEY") == null ? "unset" : "set"));
    }

    private static String value(List<String> args, String flag, String fallback) {
        int i = args.indexOf(flag);
        return i >= 0 && i + 1 < args.size() ? args.get(i + 1) : fallback;
    }

    private static void send(HttpExchange ex, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(status, bytes.length);
        try (var out = ex.getResponseBody()) {
            out.write(bytes);
        }
    }
}
