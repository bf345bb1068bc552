package dev.lazarus.llamacpp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * An upstream that closes reused connections on purpose (issue 14, finding 1): it answers the first
 * request on each connection with a whole stream and keeps the connection open, as its headers
 * promise, then closes the connection when a second request comes on it, without a byte of answer.
 * That is what a pooled connection meets when llama-server already ended it. Two more behaviours for
 * {@code reuse-stream-connections: auto}: llama-server's own (the connection ended right after each
 * streamed answer) and a proxy's with a keep-alive pool (every request answered on the same connection).
 */
class ReusedConnectionTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private ServerSocket server;
    private Thread acceptor;
    /** Connections whose first request was a POST. */
    private final AtomicInteger connections = new AtomicInteger();
    private final AtomicInteger droppedRequests = new AtomicInteger();
    private final List<String> postHeads = new CopyOnWriteArrayList<>();
    private volatile boolean dropEveryRequest;
    private volatile Behaviour behaviour = Behaviour.DROP_REUSED;

    private enum Behaviour { DROP_REUSED, CLOSE_AFTER_ANSWER, KEEP }
    private LlamaCppBackend backend;

    @BeforeEach
    void listen() throws IOException {
        server = new ServerSocket(0, 16, InetAddress.getLoopbackAddress());
        acceptor = Thread.ofVirtual().start(this::acceptLoop);
    }

    @AfterEach
    void stop() throws IOException {
        if (backend != null) {
            backend.close();
        }
        server.close();
    }

    private LlamaCppBackend backend(Map<String, Object> extra) {
        // translate: no probe of the native endpoints, so the server sees only the test's requests
        Map<String, Object> settings = new HashMap<>(Map.of(
                "url", "http://127.0.0.1:" + server.getLocalPort(), "model-name", "tiny", "max-connections", 1,
                "messages", "translate", "responses", "translate"));
        settings.putAll(extra);
        backend = new LlamaCppBackend(new BackendConfig("closing", "llamacpp", settings));
        return backend;
    }

    @Test
    void aRequestOnAReusedConnectionTheUpstreamClosedIsSentAgainOnANewOne() {
        LlamaCppBackend b = backend(Map.of("reuse-stream-connections", true));
        for (int i = 0; i < 4; i++) {
            assertThat(text(b)).isEqualTo("Hi");
        }
        // Requests 2 and 4 went out on the kept connection first, were dropped, then went on a new one
        // (which is not pooled: request 3 opens the next pooled connection).
        assertThat(droppedRequests.get()).isEqualTo(2);
        assertThat(connections.get()).isEqualTo(4);
    }

    @Test
    void setToFalseStreamedRequestsAskForTheConnectionToClose() {
        LlamaCppBackend b = backend(Map.of("reuse-stream-connections", false));
        for (int i = 0; i < 3; i++) {
            assertThat(text(b)).isEqualTo("Hi");
        }
        assertThat(postHeads).hasSize(3).allSatisfy(head -> assertThat(head.toLowerCase()).contains("connection: close"));
    }

    @Test
    void byDefaultAServerThatKeepsStreamedConnectionsAnswersAllOnOne() {
        behaviour = Behaviour.KEEP;
        LlamaCppBackend b = backend(Map.of());
        for (int i = 0; i < 5; i++) {
            assertThat(text(b)).isEqualTo("Hi");
        }
        assertThat(connections.get()).isEqualTo(1);
        assertThat(postHeads).hasSize(5).noneSatisfy(head -> assertThat(head.toLowerCase()).contains("connection: close"));
    }

    @Test
    void byDefaultAServerThatEndsStreamedConnectionsIsAskedToCloseThemFromThenOn() {
        behaviour = Behaviour.CLOSE_AFTER_ANSWER;
        LlamaCppBackend b = backend(Map.of());
        for (int i = 0; i < 5; i++) {
            assertThat(text(b)).isEqualTo("Hi");
        }
        assertThat(postHeads.getFirst().toLowerCase()).doesNotContain("connection: close");
        // the second request may go out on the first connection before its end is seen (then once more on a
        // new one); from the third on, every streamed request asks for the close itself
        assertThat(postHeads.subList(postHeads.size() - 3, postHeads.size()))
                .allSatisfy(head -> assertThat(head.toLowerCase()).contains("connection: close"));
        assertThat(droppedRequests.get()).isLessThanOrEqualTo(1);
    }

    @Test
    void byDefaultAServerThatDropsReusedConnectionsIsAskedToCloseThemFromThenOn() {
        LlamaCppBackend b = backend(Map.of());
        for (int i = 0; i < 4; i++) {
            assertThat(text(b)).isEqualTo("Hi");
        }
        // request 2 met the dropped connection and went again on a new one; none after it was dropped
        assertThat(droppedRequests.get()).isEqualTo(1);
        assertThat(postHeads).hasSize(4);
        assertThat(postHeads.getFirst().toLowerCase()).doesNotContain("connection: close");
        assertThat(postHeads.subList(1, 4)).allSatisfy(head -> assertThat(head.toLowerCase()).contains("connection: close"));
    }

    @Test
    void aNewConnectionClosedBeforeTheAnswerIsNotSentAgain() {
        dropEveryRequest = true;
        LlamaCppBackend b = backend(Map.of("reuse-stream-connections", true));
        assertThatThrownBy(() -> text(b))
                .isInstanceOfSatisfying(BackendException.class, e -> assertThat(e.kind()).isEqualTo(BackendErrorKind.UPSTREAM));
        assertThat(droppedRequests.get()).isEqualTo(1);
    }

    private static String text(LlamaCppBackend b) {
        StringBuilder text = new StringBuilder();
        b.chat(ChatCompletionRequest.of("tiny", List.of(ChatMessage.user("hello"))))
                .map(ChatCompletionChunk::contentDelta)
                .filter(d -> d != null)
                .doOnNext(text::append)
                .blockLast(WAIT);
        return text.toString();
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket socket = server.accept();
                Thread.ofVirtual().start(() -> serve(socket));
            } catch (IOException closed) {
                return;
            }
        }
    }

    /**
     * The first request on a connection gets an answer; a later one gets the connection closed under it, or the
     * connection is ended right after the answer, or every request is answered ({@link #behaviour}).
     */
    private void serve(Socket socket) {
        try (socket) {
            InputStream in = socket.getInputStream();
            OutputStream out = socket.getOutputStream();
            boolean first = true;
            while (true) {
                String head = readRequest(in);
                if (head == null) {
                    return;
                }
                if (!head.startsWith("POST ")) {
                    out.write("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                            .getBytes(StandardCharsets.US_ASCII));
                    return;
                }
                if (first) {
                    connections.incrementAndGet(); // connections that carried a completion; GETs are not counted
                }
                if ((!first && behaviour == Behaviour.DROP_REUSED) || dropEveryRequest) {
                    droppedRequests.incrementAndGet();
                    return;
                }
                first = false;
                postHeads.add(head);
                writeStream(out);
                if (head.toLowerCase().contains("connection: close") || behaviour == Behaviour.CLOSE_AFTER_ANSWER) {
                    return;
                }
            }
        } catch (IOException e) {
            // the client went away
        }
    }

    private static void writeStream(OutputStream out) throws IOException {
        StringBuilder body = new StringBuilder();
        body.append(chunk(LlamaCppBackendWireMockTest.chunk("Hi", null)));
        body.append(chunk(LlamaCppBackendWireMockTest.chunk("", "stop")));
        body.append(chunk("data: [DONE]\n\n"));
        body.append("0\r\n\r\n");
        out.write(("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"
                + "Keep-Alive: timeout=5, max=100\r\n\r\n" + body).getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    private static String chunk(String data) {
        return Integer.toHexString(data.getBytes(StandardCharsets.UTF_8).length) + "\r\n" + data + "\r\n";
    }

    /** The request head, its body read and dropped; null at the end of the connection. */
    private static String readRequest(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        while (!head.toString(StandardCharsets.US_ASCII).endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                return null;
            }
            head.write(b);
        }
        String text = head.toString(StandardCharsets.US_ASCII);
        String length = text.lines()
                .filter(l -> l.toLowerCase().startsWith("content-length:"))
                .map(l -> l.substring(l.indexOf(':') + 1).strip()).findFirst().orElse("0");
        in.readNBytes(Integer.parseInt(length));
        return text;
    }
}
