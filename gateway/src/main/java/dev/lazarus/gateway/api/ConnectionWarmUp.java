package dev.lazarus.gateway.api;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.core.env.Environment;

/**
 * Opens {@code lazarus.connections.warm-up} connections to the gateway's own port, one request each, before it
 * reports ready. What a new connection runs (accept, the pipeline's set-up, the guards, the first request's
 * exchange, the close) runs once per connection, so under keep-alive clients it stays interpreted long after
 * the request path is compiled: the first requests of a burst of new connections then took 10-45 ms where later
 * ones took 1 ms (docs/benchmarks.md, "The first request on a new connection"). A few hundred connections at
 * start-up get that code compiled first. Runs as an {@link ApplicationRunner}: after the server listens, before
 * the readiness probe says it accepts traffic.
 */
final class ConnectionWarmUp implements ApplicationRunner {

    private static final Logger log = LoggerFactory.getLogger(ConnectionWarmUp.class);
    private static final int TIMEOUT_MILLIS = 5_000;
    /** Answered by the gateway itself, never relayed: a liveness probe (or its 401/404 where that is closed). */
    private static final byte[] REQUEST = ("GET /actuator/health/liveness HTTP/1.1\r\nHost: localhost\r\n"
            + "Connection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII);

    private final int connections;
    private final Environment environment;

    ConnectionWarmUp(int connections, Environment environment) {
        this.connections = connections;
        this.environment = environment;
    }

    @Override
    public void run(ApplicationArguments args) {
        Integer port = environment.getProperty("local.server.port", Integer.class);
        if (connections <= 0 || port == null || port <= 0) {
            return;
        }
        long start = System.nanoTime();
        int done = open(new InetSocketAddress(address(environment.getProperty("server.address")), port), connections);
        log.info("Connection path warmed up: {} of {} connections in {} ms", done, connections,
                (System.nanoTime() - start) / 1_000_000);
    }

    /** The server's own address to connect to: loopback where it listens on all of them. */
    static InetAddress address(String serverAddress) {
        try {
            InetAddress bound = serverAddress == null || serverAddress.isBlank() ? null : InetAddress.getByName(serverAddress);
            return bound == null || bound.isAnyLocalAddress() ? InetAddress.getLoopbackAddress() : bound;
        } catch (UnknownHostException e) {
            return InetAddress.getLoopbackAddress();
        }
    }

    /**
     * Opens {@code count} connections one after the other, each sending one request and reading the answer to its
     * close; stops at the first that fails (a warm-up is not worth a slow start-up).
     *
     * @return the connections that got an answer
     */
    static int open(InetSocketAddress server, int count) {
        byte[] sink = new byte[4096];
        for (int i = 0; i < count; i++) {
            try (Socket socket = new Socket()) {
                socket.connect(server, TIMEOUT_MILLIS);
                socket.setSoTimeout(TIMEOUT_MILLIS);
                socket.getOutputStream().write(REQUEST);
                InputStream in = socket.getInputStream();
                int total = 0;
                for (int n; (n = in.read(sink)) >= 0; ) {
                    total += n;
                }
                if (total == 0) {
                    return i;
                }
            } catch (IOException e) {
                log.debug("Connection warm-up stopped after {} connections: {}", i, e.toString());
                return i;
            }
        }
        return count;
    }
}
