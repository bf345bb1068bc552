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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
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
 * flight. A real local upstream that streams as fast as it is read, raw sockets with small
 * receive buffers, and curl processes killed with SIGKILL.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "lazarus.security.api-keys[0]=flood-key", "lazarus.health.interval=1h",
        "lazarus.resilience.attempt.retries=0",
        // Would open at the first failure: a stalled client must not be one.
        "lazarus.resilience.breaker.minimum-number-of-calls=1", "lazarus.resilience.breaker.sliding-window-size=1",
        "lazarus.connections.write-stall-timeout=5s"})
@ActiveProfiles("test")
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class SlowConsumerTest {

    private static final int STALLED = 8;
    /** What one stalled stream may hold inside the gateway: its write buffer and one upstream read. */
    private static final long HELD_PER_STREAM = 256 * 1024;
    /**
     * What the kernel may hold of one stalled stream: the gateway's send buffer (64KB by default, which Linux doubles)
     * and the client's small receive buffer. Left to autotuning, the send buffer of a loopback connection starts at
     * megabytes, all of it relayed, and its text kept for a mid-stream resume.
     */
    private static final long KERNEL_PER_STREAM = 256 * 1024;

    private static FloodingUpstream upstream;

    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) throws IOException {
        upstream = new FloodingUpstream(5_000_000);
        registry.add("lazarus.backends[0].id", () -> "flood");
        registry.add("lazarus.backends[0].kind", () -> "llamacpp");
        registry.add("lazarus.backends[0].settings.url", upstream::baseUrl);
        registry.add("lazarus.backends[0].settings.model-name", () -> "flood");
        // Shorter than the stall cut: a stalled client must not look like a stalled backend.
        registry.add("lazarus.backends[0].settings.idle-timeout", () -> "3s");
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

    /** The streaming endpoints, each with a request for {@code max} tokens and how its stream ends. */
    enum Api {
        CHAT("/v1/chat/completions", "{\"model\":\"flood-model\",\"stream\":true,\"max_tokens\":%d,"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", "data: [DONE]\n\n"),
        RESPONSES("/v1/responses", "{\"model\":\"flood-model\",\"stream\":true,\"max_output_tokens\":%d,"
                + "\"store\":false,\"input\":\"hi\"}", "event: response.completed\n"),
        MESSAGES("/v1/messages", "{\"model\":\"flood-model\",\"stream\":true,\"max_tokens\":%d,"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", "event: message_stop\n");

        final String path;
        final String body;
        final String end;

        Api(String path, String body, String end) {
            this.path = path;
            this.body = body;
            this.end = end;
        }

        String request(long max) {
            String json = body.formatted(max);
            return "POST " + path + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer flood-key\r\n"
                    + "Content-Type: application/json\r\nContent-Length: " + json.length() + "\r\n\r\n" + json;
        }
    }

    /** More tokens than any stalled client reads: the upstream floods until the gateway lets it go. */
    private static final long FLOOD = 5_000_000;

    @ParameterizedTest
    @EnumSource(Api.class)
    void clientsThatStopReadingHoldBackTheUpstreamAndAreCutWithoutChargingTheBackend(Api api) throws Exception {
        CircuitBreaker breaker = breakers.breaker("flood");
        double ratio = upstreamBytesPerClientByte(api);
        int failures = breaker.getMetrics().getNumberOfFailedCalls();
        long before = upstream.bytesWritten.get();
        List<Stalled> clients = new ArrayList<>();
        try {
            for (int i = 0; i < STALLED; i++) {
                clients.add(new Stalled(port, api));
            }
            // While all are stalled and none is cut yet: what the upstream wrote is in the kernel's queues on the
            // upstream side, went to the client (in its queues or read), or is held by the gateway; the last must
            // stay bounded however long it lasts. What went to the client counts in the upstream's bytes at the
            // stream's own ratio (a translated stream writes other bytes than it reads; a relay 1:1).
            long worst = 0;
            long worstKernel = 0;
            for (int i = 0; i < 8; i++) {
                Thread.sleep(250);
                long upstreamSide = KernelSocketQueues.queuedBytes(Set.of(upstream.port()));
                long clientSide = KernelSocketQueues.queuedBytes(Set.of(port));
                long read = clients.stream().mapToLong(c -> c.read).sum();
                long held = upstream.bytesWritten.get() - before - upstreamSide - Math.round((read + clientSide) * ratio);
                if (upstream.openStreams.get() == STALLED) {
                    worst = Math.max(worst, held);
                    worstKernel = Math.max(worstKernel, clientSide);
                }
            }
            assertThat(worst).as("bytes the gateway holds for %d stalled %s streams", STALLED, api)
                    .isLessThan(STALLED * HELD_PER_STREAM);
            assertThat(worstKernel).as("bytes the kernel holds for %d stalled %s streams", STALLED, api)
                    .isLessThan(STALLED * KERNEL_PER_STREAM);

            // Cut after the stall: the upstream streams are let go while the clients still hold their sockets.
            await(() -> upstream.openStreams.get() == 0 && calls.inFlight("flood") == 0, 30_000);
            for (Stalled client : clients) {
                assertThat(client.readsToTheEnd()).as("what the gateway did with the stalled connection")
                        .isEqualTo("closed");
            }
        } finally {
            for (Stalled client : clients) {
                client.close();
            }
        }
        assertThat(breaker.getMetrics().getNumberOfFailedCalls()).as("failures charged to the backend").isEqualTo(failures);
        assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
        assertThat(normalStream(api)).as("a client that reads is served").contains(api.end).endsWith("\n\n");
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
        assertThat(normalStream(Api.CHAT)).endsWith("data: [DONE]\n\n");
    }

    /** The upstream's bytes for each byte the client gets, from a long stream read whole (at least 1). */
    private double upstreamBytesPerClientByte(Api api) throws IOException {
        long before = upstream.bytesWritten.get();
        int got = normalStream(api, 2_000).length();
        return Math.max(1.0, (double) (upstream.bytesWritten.get() - before) / got);
    }

    /** A short stream read whole by a client that reads, up to the end of its last event. */
    private String normalStream(Api api) throws IOException {
        return normalStream(api, 50);
    }

    private String normalStream(Api api, int tokens) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(20_000);
            socket.getOutputStream().write(api.request(tokens).getBytes(StandardCharsets.US_ASCII));
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            InputStream in = socket.getInputStream();
            byte[] buffer = new byte[8192];
            String text = "";
            int end;
            while ((end = lastEventEnd(text, api.end)) < 0) {
                int n = in.read(buffer);
                if (n < 0) {
                    break;
                }
                got.write(buffer, 0, n);
                text = got.toString(StandardCharsets.ISO_8859_1);
            }
            assertThat(text).startsWith("HTTP/1.1 200");
            assertThat(end).as("the stream's last event came whole").isPositive();
            // chunked framing: the last event is followed by the chunk's CRLF
            return text.substring(0, end);
        }
    }

    /** Where the event that begins with {@code last} ends, or -1 before it came whole. */
    private static int lastEventEnd(String text, String last) {
        int at = text.indexOf(last);
        int end = at < 0 ? -1 : text.indexOf("\n\n", at);
        return end < 0 ? -1 : end + 2;
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

        Stalled(int port, Api api) throws IOException {
            socket.setReceiveBufferSize(4096);
            socket.connect(new InetSocketAddress("127.0.0.1", port));
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write(api.request(FLOOD).getBytes(StandardCharsets.US_ASCII));
            byte[] buffer = new byte[1024];
            int n = socket.getInputStream().read(buffer);
            read += Math.max(0, n);
            assertThat(new String(buffer, 0, Math.max(0, n), StandardCharsets.ISO_8859_1)).startsWith("HTTP/1.1 200");
        }

        /**
         * Reads what is left: "closed" when the gateway had closed the connection (end of stream or reset), else what
         * it does instead. Bounded, so that a connection that goes on streaming fails the test with that, not by its
         * time limit: what was queued before the cut is at most a few socket buffers.
         */
        String readsToTheEnd() throws IOException {
            InputStream in = socket.getInputStream();
            byte[] buffer = new byte[65536];
            long drained = 0;
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
            try {
                for (int n; (n = in.read(buffer)) >= 0; drained += n) {
                    if (drained > 16 << 20 || System.nanoTime() > until) {
                        return "still streaming after " + drained + " bytes";
                    }
                }
                return "closed";
            } catch (SocketTimeoutException e) {
                return "open and silent after " + drained + " bytes";
            } catch (IOException e) {
                return "closed";
            }
        }

        @Override
        public void close() throws IOException {
            socket.setSoLinger(true, 0);
            socket.close();
        }
    }
}
