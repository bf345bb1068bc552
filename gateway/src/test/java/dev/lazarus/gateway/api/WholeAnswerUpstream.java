package dev.lazarus.gateway.api;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A real local HTTP server in the shape of llama-server answering non-streamed chat requests whole, after a delay
 * ({@code thinking}); once {@link #hang()} is called it still accepts connections but answers nothing at all, not even
 * its health check, as a hung or stopped server whose listening socket the kernel keeps open.
 */
final class WholeAnswerUpstream implements AutoCloseable {

    private final ServerSocket server;
    private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
    private final String content;
    private final Duration thinking;
    private final AtomicBoolean hung = new AtomicBoolean();

    WholeAnswerUpstream(String content, Duration thinking) throws IOException {
        this.content = content;
        this.thinking = thinking;
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        threads.submit(this::accept);
    }

    String baseUrl() {
        return "http://127.0.0.1:" + server.getLocalPort();
    }

    void hang() {
        hung.set(true);
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket socket = server.accept();
                threads.submit(() -> serve(socket));
            } catch (IOException e) {
                return;
            }
        }
    }

    private void serve(Socket socket) {
        try (socket) {
            if (hung.get()) {
                // holds the connection, reads and answers nothing until the test ends
                Thread.sleep(Duration.ofMinutes(10));
                return;
            }
            InputStream in = socket.getInputStream();
            String head = FloodingUpstream.readHead(in);
            if (head == null) {
                return;
            }
            in.readNBytes(FloodingUpstream.contentLength(head));
            OutputStream out = socket.getOutputStream();
            if (head.startsWith("GET /health")) {
                answer(out, "200 OK", "{\"status\":\"ok\"}");
            } else if (head.startsWith("POST /v1/chat/completions")) {
                Thread.sleep(thinking);
                answer(out, "200 OK", "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"created\":1700000000,"
                        + "\"model\":\"whole\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\""
                        + content + "\"},\"finish_reason\":\"stop\"}],"
                        + "\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2,\"total_tokens\":5}}");
            } else {
                answer(out, "404 Not Found", "{\"error\":{\"code\":404,\"message\":\"File Not Found\"}}");
            }
        } catch (IOException | InterruptedException e) {
            // the gateway let the call go, or the test ended
        }
    }

    private static void answer(OutputStream out, String status, String json) throws IOException {
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        out.write(("HTTP/1.1 " + status + "\r\nContent-Type: application/json\r\nContent-Length: " + body.length
                + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.write(body);
        out.flush();
    }

    @Override
    public void close() throws IOException {
        server.close();
        threads.shutdownNow();
    }
}
