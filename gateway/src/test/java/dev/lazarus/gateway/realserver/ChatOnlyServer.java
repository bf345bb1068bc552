package dev.lazarus.gateway.realserver;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An HTTP server on loopback in front of a real llama-server that, while {@link #refusing}, serves everything but
 * Anthropic's {@code /v1/messages} and OpenAI's {@code /v1/responses}: those it answers 404 as llama-server answers a
 * path it does not know, as an older llama-server or another OpenAI-compatible server without them does. Every other
 * request goes to the llama-server and its answer back as it comes (a stream event by event).
 */
final class ChatOnlyServer implements AutoCloseable {

    private static final byte[] NOT_FOUND = """
            {"error":{"code":404,"message":"File Not Found","type":"not_found_error"}}""".getBytes(StandardCharsets.UTF_8);

    private final HttpServer server;
    private final URI target;
    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    /** Whether the protocol endpoints are answered 404 (else passed on like the rest). */
    final AtomicBoolean refusing = new AtomicBoolean(true);
    private final Map<String, AtomicInteger> posts = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> refused = new ConcurrentHashMap<>();

    ChatOnlyServer(URI target) {
        this.target = target;
        try {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 50);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.createContext("/", this::handle);
        server.start();
    }

    URI url() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    /** POSTs to {@code path} so far, passed on or refused. */
    int posts(String path) {
        return posts.computeIfAbsent(path, p -> new AtomicInteger()).get();
    }

    /** POSTs to {@code path} answered 404 so far. */
    int refused(String path) {
        return refused.computeIfAbsent(path, p -> new AtomicInteger()).get();
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            String path = exchange.getRequestURI().getPath();
            byte[] body = exchange.getRequestBody().readAllBytes();
            boolean post = exchange.getRequestMethod().equals("POST");
            if (post) {
                posts.computeIfAbsent(path, p -> new AtomicInteger()).incrementAndGet();
            }
            if (refusing.get() && (path.startsWith("/v1/messages") || path.startsWith("/v1/responses"))) {
                if (post) {
                    refused.computeIfAbsent(path, p -> new AtomicInteger()).incrementAndGet();
                }
                exchange.getResponseHeaders().set("Content-Type", "application/json; charset=utf-8");
                exchange.sendResponseHeaders(404, NOT_FOUND.length);
                exchange.getResponseBody().write(NOT_FOUND);
                return;
            }
            HttpRequest.Builder request = HttpRequest.newBuilder(target.resolve(exchange.getRequestURI().toString()))
                    .timeout(Duration.ofMinutes(2))
                    .method(exchange.getRequestMethod(), body.length == 0 && !post ? HttpRequest.BodyPublishers.noBody()
                            : HttpRequest.BodyPublishers.ofByteArray(body));
            String contentType = exchange.getRequestHeaders().getFirst("Content-Type");
            if (contentType != null) {
                request.header("Content-Type", contentType);
            }
            HttpResponse<InputStream> answer = client.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
            answer.headers().firstValue("Content-Type").ifPresent(type -> exchange.getResponseHeaders().set("Content-Type", type));
            exchange.sendResponseHeaders(answer.statusCode(), 0); // chunked: a stream goes on as it comes
            try (InputStream in = answer.body(); OutputStream out = exchange.getResponseBody()) {
                byte[] buffer = new byte[8192];
                for (int n; (n = in.read(buffer)) > 0; ) {
                    out.write(buffer, 0, n);
                    out.flush();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
