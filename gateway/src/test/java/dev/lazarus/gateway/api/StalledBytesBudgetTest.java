package dev.lazarus.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Issue 35: the global budget of bytes held for stalled clients. A stalled connection holds at least its
 * write buffer (64 KB here) and little more (an upstream read or two); with a budget of 300 KB at most
 * four of six stalled clients can stay: the others are cut at once, long before the write-stall timeout
 * (an hour here). Which ones is not fixed: a connection whose kernel buffer grew becomes writable for a
 * moment and stalls anew, when the others may have taken the budget.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "lazarus.security.api-keys[0]=flood-key", "lazarus.health.interval=1h",
        "lazarus.connections.write-stall-timeout=1h", "lazarus.connections.write-buffer=64KB",
        "lazarus.connections.stalled-bytes-max=300KB"})
@ActiveProfiles("test")
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class StalledBytesBudgetTest {

    private static FloodingUpstream upstream;

    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) throws IOException {
        upstream = new FloodingUpstream(5_000_000);
        registry.add("lazarus.backends[0].id", () -> "flood");
        registry.add("lazarus.backends[0].kind", () -> "llamacpp");
        registry.add("lazarus.backends[0].settings.url", upstream::baseUrl);
        registry.add("lazarus.backends[0].settings.model-name", () -> "flood");
        registry.add("lazarus.models[0].name", () -> "flood-model");
        registry.add("lazarus.models[0].backends[0]", () -> "flood");
    }

    @AfterAll
    static void stop() throws IOException {
        upstream.close();
    }

    @LocalServerPort
    int port;

    @Test
    void stalledClientsBeyondTheGlobalBudgetAreCutAtOnce() throws Exception {
        List<Socket> clients = new ArrayList<>();
        try {
            String body = "{\"model\":\"flood-model\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
            for (int i = 0; i < 6; i++) {
                Socket socket = new Socket();
                socket.setReceiveBufferSize(4096);
                socket.connect(new InetSocketAddress("127.0.0.1", port));
                socket.getOutputStream().write(("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                        + "Authorization: Bearer flood-key\r\nContent-Type: application/json\r\nContent-Length: "
                        + body.length() + "\r\n\r\n" + body).getBytes(StandardCharsets.US_ASCII));
                clients.add(socket);
                // one at a time: each stalls (fills its buffers) before the next comes
                Thread.sleep(1_500);
            }
            long end = System.currentTimeMillis() + 20_000;
            while (upstream.openStreams.get() > 4 && System.currentTimeMillis() < end) {
                Thread.sleep(50);
            }
            assertThat(upstream.openStreams.get()).as("streams left after the budget's cuts").isBetween(1, 4);
            long cut = 0;
            for (Socket socket : clients) {
                cut += closed(socket) ? 1 : 0;
            }
            assertThat(cut).as("stalled clients cut").isBetween(2L, 5L);
        } finally {
            for (Socket socket : clients) {
                socket.setSoLinger(true, 0);
                socket.close();
            }
        }
    }

    /**
     * Reads what is queued; true when the gateway had closed the connection. A client the budget left alone streams on
     * once read (its upstream floods), so the drain stops past what a cut connection's socket buffers can hold.
     */
    private static boolean closed(Socket socket) throws IOException {
        socket.setSoTimeout(3_000);
        byte[] buffer = new byte[65536];
        long drained = 0;
        try {
            for (int n; (n = socket.getInputStream().read(buffer)) >= 0; drained += n) {
                if (drained > 16 << 20) {
                    return false;
                }
            }
            return true;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException e) {
            return true;
        }
    }
}
