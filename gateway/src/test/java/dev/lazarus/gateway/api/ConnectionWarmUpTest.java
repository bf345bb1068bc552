package dev.lazarus.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

@Timeout(30)
class ConnectionWarmUpTest {

    @Test
    void opensEachConnectionWithOneRequestAndReadsItsAnswer() throws Exception {
        List<String> requests = new CopyOnWriteArrayList<>();
        try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread.ofVirtual().start(() -> serve(server, requests));
            int done = ConnectionWarmUp.open(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getLocalPort()), 25);

            assertThat(done).isEqualTo(25);
            assertThat(requests).hasSize(25)
                    .allSatisfy(head -> assertThat(head).startsWith("GET /actuator/health/liveness HTTP/1.1\r\n")
                            .contains("Connection: close\r\n"));
        }
    }

    @Test
    void stopsAtTheFirstConnectionThatFails() throws Exception {
        int port;
        try (ServerSocket closed = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            port = closed.getLocalPort();
        }
        assertThat(ConnectionWarmUp.open(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 500)).isZero();
    }

    @Test
    void connectsToLoopbackWhereTheServerListensOnAllAddresses() throws Exception {
        assertThat(ConnectionWarmUp.address(null)).isEqualTo(InetAddress.getLoopbackAddress());
        assertThat(ConnectionWarmUp.address("0.0.0.0")).isEqualTo(InetAddress.getLoopbackAddress());
        assertThat(ConnectionWarmUp.address("127.0.0.2")).isEqualTo(InetAddress.getByName("127.0.0.2"));
    }

    @Test
    void warmsFiveHundredConnectionsByDefault() {
        ConnectionProperties defaults = new Binder(new MapConfigurationPropertySource(Map.of()))
                .bindOrCreate("lazarus.connections", ConnectionProperties.class);
        assertThat(defaults.warmUp()).isEqualTo(500);
        ConnectionProperties off = new Binder(new MapConfigurationPropertySource(Map.of("lazarus.connections.warm-up", "0")))
                .bindOrCreate("lazarus.connections", ConnectionProperties.class);
        assertThat(off.warmUp()).isZero();
    }

    /** Answers each connection's one request with an empty 200 and closes it, recording the request's head. */
    private static void serve(ServerSocket server, List<String> requests) {
        while (!server.isClosed()) {
            try (Socket client = server.accept()) {
                InputStream in = client.getInputStream();
                StringBuilder head = new StringBuilder();
                while (!head.toString().endsWith("\r\n\r\n")) {
                    int b = in.read();
                    if (b < 0) {
                        break;
                    }
                    head.append((char) b);
                }
                requests.add(head.toString());
                client.getOutputStream().write("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                        .getBytes(StandardCharsets.US_ASCII));
            } catch (IOException e) {
                return;
            }
        }
    }
}
