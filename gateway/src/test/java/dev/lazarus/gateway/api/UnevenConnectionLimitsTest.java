package dev.lazarus.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.ActiveProfiles;

/**
 * The connection guard's one timer per connection with limits of different lengths: a short header
 * limit begun while a long idle limit ran is kept, and so is a long body limit after a short header
 * (a timer task left over from a longer phase must not delay a shorter phase's deadline, nor a leftover
 * from a shorter one cut a longer phase short).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "lazarus.connections.header-timeout=1s", "lazarus.connections.body-timeout=4s",
        "lazarus.connections.idle-timeout=30s"})
@ActiveProfiles("test")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UnevenConnectionLimitsTest {

    private static final String POST = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer test-key-1\r\n"
            + "Content-Type: application/json\r\n";

    @LocalServerPort
    int port;

    @Test
    void aHeadBegunOnAnIdleConnectionMeetsTheHeaderLimitNotTheIdleOne() throws Exception {
        try (RawHttp socket = new RawHttp(port)) {
            Thread.sleep(1_500);
            socket.send("GET /v1/models HTTP/1.1\r\n");
            long start = System.nanoTime();
            String got = socket.readUntilClosed(8_000);
            assertThat(got).as("closed within 8 s, not after the 30 s idle limit").isNotNull();
            assertThat(got).startsWith("HTTP/1.1 408");
            // The 1 s header limit, counted from the head's first byte; the idle limit (30 s) never came near.
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isGreaterThanOrEqualTo(900);
        }
    }

    @Test
    void aBodyPauseGetsTheBodyLimitAfterAShortHeaderLimit() throws Exception {
        try (RawHttp socket = new RawHttp(port).send(POST + "Content-Length: 100\r\n\r\n{\"model\":")) {
            long start = System.nanoTime();
            String got = socket.readUntilClosed(10_000);
            assertThat(got).isNotNull().startsWith("HTTP/1.1 408");
            // Not at the 1 s header limit's timer: the body's 4 s (less a little for when the head was read).
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isGreaterThanOrEqualTo(3_500);
        }
    }
}
