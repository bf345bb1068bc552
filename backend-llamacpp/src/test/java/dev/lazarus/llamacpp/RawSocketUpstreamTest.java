package dev.lazarus.llamacpp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatEvent;
import dev.lazarus.backend.api.openai.ChatEvents;
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
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Failures in the middle of a streamed answer, which WireMock cannot stage (its faults replace the
 * whole response): a hand-written HTTP/1.1 upstream sends one chunk and then misbehaves.
 */
class RawSocketUpstreamTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private ServerSocket server;
    private LlamaCppBackend backend;

    @BeforeEach
    void listen() throws IOException {
        server = new ServerSocket(0, 4, InetAddress.getLoopbackAddress());
        server.setSoTimeout((int) WAIT.toMillis());
        backend = new LlamaCppBackend(new BackendConfig("raw", "llamacpp", Map.of(
                "url", "http://127.0.0.1:" + server.getLocalPort(), "model-name", "tiny", "idle-timeout", "10s",
                // translate: no probe of the native endpoints on the one scripted connection
                "messages", "translate", "responses", "translate")));
    }

    @AfterEach
    void stop() throws IOException {
        backend.close();
        server.close();
    }

    @Test
    void aConnectionResetAfterTheFirstTokenFailsAsUpstreamAfterThatToken() {
        CompletableFuture<Void> upstream = CompletableFuture.runAsync(() -> serveOneChunkThen(socket -> {
            sleep(200);
            socket.setSoLinger(true, 0); // close with RST, as a crashed server's kernel would
        }));
        List<ChatCompletionChunk> got = new CopyOnWriteArrayList<>();
        assertThatThrownBy(() -> backend.chat(hello()).doOnNext(got::add).blockLast(WAIT))
                .isInstanceOfSatisfying(BackendException.class, e -> assertThat(e.kind()).isEqualTo(BackendErrorKind.UPSTREAM));
        assertThat(got).extracting(ChatCompletionChunk::contentDelta).containsExactly("Hel");
        upstream.join();
    }

    @Test
    void cancellingTheStreamClosesTheUpstreamConnection() throws Exception {
        CompletableFuture<Integer> readAfterCancel = new CompletableFuture<>();
        CompletableFuture.runAsync(() -> serveOneChunkThen(socket -> {
            // llama-server stops generating when its client goes away; it notices by the socket closing.
            socket.setSoTimeout((int) WAIT.toMillis());
            readAfterCancel.complete(socket.getInputStream().read());
        }));
        ChatCompletionChunk first = backend.chat(hello()).blockFirst(WAIT);
        assertThat(first.contentDelta()).isEqualTo("Hel");
        assertThat(readAfterCancel.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(-1);
    }

    @Test
    void eventsWrittenAsChunksOfOneReadComeAsOnePiece() {
        List<String> events = List.of(LlamaCppBackendWireMockTest.chunk("Hel", null),
                LlamaCppBackendWireMockTest.chunk("lo", "stop"), LlamaCppBackendWireMockTest.USAGE_CHUNK, "data: [DONE]\n\n");
        CompletableFuture<Void> upstream = CompletableFuture.runAsync(() -> serve(socket -> {
            StringBuilder answer = new StringBuilder(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n");
            for (String event : events) {
                answer.append(Integer.toHexString(event.getBytes(StandardCharsets.UTF_8).length)).append("\r\n")
                        .append(event).append("\r\n");
            }
            // one write: the events reach the backend in one read, as a burst from a fast server does
            socket.getOutputStream().write(answer.append("0\r\n\r\n").toString().getBytes(StandardCharsets.UTF_8));
        }));

        List<ChatEvents> pieces = backend.chatEvents(hello()).collectList().block(WAIT);

        assertThat(pieces).hasSize(1);
        assertThat(pieces.getFirst().events()).extracting(ChatEvent::text).containsExactly("Hel", "lo", null);
        upstream.join();
    }

    /** Answers the backend's background GETs with 404 and the first POST with {@code answer}. */
    private void serve(SocketAction answer) {
        try {
            while (true) {
                try (Socket socket = server.accept()) {
                    if (!readRequest(socket.getInputStream()).startsWith("POST ")) {
                        socket.getOutputStream().write("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                                .getBytes(StandardCharsets.US_ASCII));
                        continue;
                    }
                    answer.run(socket);
                    return;
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static ChatCompletionRequest hello() {
        return ChatCompletionRequest.of("tiny", List.of(ChatMessage.user("hello")));
    }

    private interface SocketAction {
        void run(Socket socket) throws IOException;
    }

    /** Answers the backend's background GETs with 404 and the first POST with one chunk, then {@code then}. */
    private void serveOneChunkThen(SocketAction then) {
        try {
            while (true) {
                try (Socket socket = server.accept()) {
                    if (!readRequest(socket.getInputStream()).startsWith("POST ")) {
                        socket.getOutputStream().write("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                                .getBytes(StandardCharsets.US_ASCII));
                        continue;
                    }
                    OutputStream out = socket.getOutputStream();
                    byte[] event = LlamaCppBackendWireMockTest.chunk("Hel", null).getBytes(StandardCharsets.UTF_8);
                    out.write(("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                            + Integer.toHexString(event.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
                    out.write(event);
                    out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                    then.run(socket);
                    return;
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Reads the request head and its Content-Length body; returns the head. */
    private static String readRequest(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        while (!head.toString(StandardCharsets.US_ASCII).endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("request cut short");
            }
            head.write(b);
        }
        String length = head.toString(StandardCharsets.US_ASCII).lines()
                .filter(l -> l.toLowerCase().startsWith("content-length:"))
                .map(l -> l.substring(l.indexOf(':') + 1).strip()).findFirst().orElse("0");
        in.readNBytes(Integer.parseInt(length));
        return head.toString(StandardCharsets.US_ASCII);
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
