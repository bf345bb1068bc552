package dev.lazarus.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.gateway.policy.PolicyCallDecorator;
import dev.lazarus.gateway.resilience.BackendBreakers;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Issue 35, the slow-consumer attack: a client that asks for a stream and stops reading must not make the
 * gateway read its upstream ahead into memory, is cut after the configured write stall with the upstream
 * let go, and does not get a healthy backend charged with a failure (its stream-idle timeout, shorter here
 * than the stall cut, must not fire for a client's stall); clients killed mid-stream leave nothing in
 * flight. A real local upstream that streams as fast as it is read, raw sockets with small receive buffers,
 * and curl processes killed with SIGKILL.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "lazarus.security.api-keys[0]=flood-key", "lazarus.health.interval=1h",
        "lazarus.resilience.attempt.retries=0",
        // Would open at the first failure: a stalled client must not be one.
        "lazarus.resilience.breaker.minimum-number-of-calls=1", "lazarus.resilience.breaker.sliding-window-size=1",
        "lazarus.connections.write-stall-timeout=4s"})
@ActiveProfiles("test")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SlowConsumerTest {

    private static final int STALLED = 8;
    /** What one stalled stream may hold inside the gateway: its write buffer and one upstream read. */
    private static final long HELD_PER_STREAM = 256 * 1024;

    private static FloodingUpstream upstream;

    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) throws IOException {
        upstream = new FloodingUpstream(5_000_000);
        registry.add("lazarus.backends[0].id", () -> "flood");
        registry.add("lazarus.backends[0].kind", () -> "llamacpp");
        registry.add("lazarus.backends[0].settings.url", upstream::baseUrl);
        registry.add("lazarus.backends[0].settings.model-name", () -> "flood");
        // Shorter than the stall cut: a stalled client must not look like a stalled backend.
        registry.add("lazarus.backends[0].settings.idle-timeout", () -> "2s");
        registry.add("lazarus.models[0].name", () -> "flood-model");
        registry.add("lazarus.models[0].backends[0]", () -> "flood");
    }

    @AfterAll
    static void stop() throws IOException {
        upstream.close();
    }

    @LocalServerPort
    int port;

    @Autowired
    BackendBreakers breakers;

    @Autowired
    PolicyCallDecorator calls;

    @Test
    void clientsThatStopReadingHoldBackTheUpstreamAndAreCutWithoutChargingTheBackend() throws Exception {
        CircuitBreaker breaker = breakers.breaker("flood");
        int failures = breaker.getMetrics().getNumberOfFailedCalls();
        long before = upstream.bytesWritten.get();
        List<Stalled> clients = new ArrayList<>();
        try {
            for (int i = 0; i < STALLED; i++) {
                clients.add(new Stalled(port));
            }
            // While all are stalled and none is cut yet: what the upstream wrote is with the client, in the
            // kernel's socket queues, or held by the gateway; the last must stay bounded however long it lasts.
            long worst = 0;
            for (int i = 0; i < 8; i++) {
                Thread.sleep(250);
                long kernel = KernelSocketQueues.queuedBytes(Set.of(port, upstream.port()));
                long read = clients.stream().mapToLong(c -> c.read).sum();
                long held = upstream.bytesWritten.get() - before - read - kernel;
                if (upstream.openStreams.get() == STALLED) {
                    worst = Math.max(worst, held);
                }
            }
            assertThat(worst).as("bytes the gateway holds for %d stalled streams", STALLED)
                    .isLessThan(STALLED * HELD_PER_STREAM);

            // Cut after the stall: the upstream streams are let go while the clients still hold their sockets.
            await(() -> upstream.openStreams.get() == 0 && calls.inFlight("flood") == 0, 30_000);
            for (Stalled client : clients) {
                assertThat(client.readsToTheEnd()).as("the gateway closed the stalled connection").isTrue();
            }
        } finally {
            for (Stalled client : clients) {
                client.close();
            }
        }
        assertThat(breaker.getMetrics().getNumberOfFailedCalls()).as("failures charged to the backend").isEqualTo(failures);
        assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
        assertThat(normalStream()).as("a client that reads is served").endsWith("data: [DONE]\n\n");
    }

    @Test
    void clientsKilledMidStreamLeaveNothingInFlight() throws Exception {
        CircuitBreaker breaker = breakers.breaker("flood");
        int failures = breaker.getMetrics().getNumberOfFailedCalls();
        int started = upstream.streamsStarted.get();
        String body = "{\"model\":\"flood-model\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
        List<Process> curls = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            // A real client process that reads slowly, as a throttled link would.
            curls.add(new ProcessBuilder("curl", "-sN", "--limit-rate", "20k", "-o", "/dev/null",
                    "-H", "Authorization: Bearer flood-key", "-H", "Content-Type: application/json", "-d", body,
                    "http://127.0.0.1:" + port + "/v1/chat/completions")
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start());
        }
        await(() -> upstream.streamsStarted.get() - started == curls.size() && calls.inFlight("flood") == curls.size(),
                20_000);
        Thread.sleep(500);
        for (Process curl : curls) {
            curl.destroyForcibly(); // SIGKILL
        }
        for (Process curl : curls) {
            assertThat(curl.waitFor(10, TimeUnit.SECONDS)).isTrue();
        }
        await(() -> upstream.openStreams.get() == 0 && calls.inFlight("flood") == 0, 20_000);
        assertThat(breaker.getMetrics().getNumberOfFailedCalls()).isEqualTo(failures);
        assertThat(normalStream()).endsWith("data: [DONE]\n\n");
    }

    /** A short stream read whole by a client that reads. */
    private String normalStream() throws IOException {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(20_000);
            String body = "{\"model\":\"flood-model\",\"stream\":true,\"max_tokens\":50,"
                    + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
            socket.getOutputStream().write(request(body).getBytes(StandardCharsets.US_ASCII));
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            InputStream in = socket.getInputStream();
            byte[] buffer = new byte[8192];
            while (!got.toString(StandardCharsets.ISO_8859_1).contains("data: [DONE]\n\n")) {
                int n = in.read(buffer);
                if (n < 0) {
                    break;
                }
                got.write(buffer, 0, n);
            }
            String text = got.toString(StandardCharsets.ISO_8859_1);
            assertThat(text).startsWith("HTTP/1.1 200");
            // chunked framing: the last event is followed by the chunk's CRLF
            return text.substring(0, text.lastIndexOf("data: [DONE]\n\n") + "data: [DONE]\n\n".length());
        }
    }

    private static String request(String body) {
        return "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer flood-key\r\n"
                + "Content-Type: application/json\r\nContent-Length: " + body.length() + "\r\n\r\n" + body;
    }

    private static void await(BooleanSupplier condition, long millis) throws InterruptedException {
        long end = System.currentTimeMillis() + millis;
        while (!condition.getAsBoolean() && System.currentTimeMillis() < end) {
            Thread.sleep(50);
        }
        assertThat(condition.getAsBoolean()).as("within %d ms", millis).isTrue();
    }

    /** A streaming request on a socket with a small receive buffer; reads the head, then stops reading. */
    private static final class Stalled implements AutoCloseable {
        final Socket socket = new Socket();
        long read;

        Stalled(int port) throws IOException {
            socket.setReceiveBufferSize(4096);
            socket.connect(new InetSocketAddress("127.0.0.1", port));
            socket.setSoTimeout(10_000);
            String body = "{\"model\":\"flood-model\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
            socket.getOutputStream().write(request(body).getBytes(StandardCharsets.US_ASCII));
            byte[] buffer = new byte[1024];
            int n = socket.getInputStream().read(buffer);
            read += Math.max(0, n);
            assertThat(new String(buffer, 0, Math.max(0, n), StandardCharsets.ISO_8859_1)).startsWith("HTTP/1.1 200");
        }

        /** Reads what is left; true when the gateway had closed the connection (end of stream or reset). */
        boolean readsToTheEnd() throws IOException {
            InputStream in = socket.getInputStream();
            byte[] buffer = new byte[65536];
            try {
                while (in.read(buffer) >= 0) {
                    // what was queued before the cut
                }
                return true;
            } catch (SocketTimeoutException e) {
                return false;
            } catch (IOException e) {
                return true;
            }
        }

        @Override
        public void close() throws IOException {
            socket.setSoLinger(true, 0);
            socket.close();
        }
    }
}
