package dev.lazarus.gateway.realserver;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy on loopback in front of a real server that cuts a streamed answer at a chosen event:
 * it passes every byte through until the response has carried {@link #cutAfter} server-sent events
 * (each ends in a blank line, {@code \n\n}; HTTP's own line ends are {@code \r\n}), then closes both
 * connections, as a server that dies between two tokens would. Answers with fewer events (health
 * checks, {@code /props}) pass whole. The cut lands on the same event on any machine, however fast.
 */
final class CuttingProxy implements AutoCloseable {

    private final ServerSocket listener;
    private final int targetPort;
    private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
    /** Events passed before the cut; 0 for none (no cut). */
    final AtomicInteger cutAfter = new AtomicInteger();
    /** Answers cut so far. */
    final AtomicInteger cuts = new AtomicInteger();

    CuttingProxy(URI target) {
        try {
            this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        this.targetPort = target.getPort();
        threads.submit(this::accept);
    }

    URI url() {
        return URI.create("http://127.0.0.1:" + listener.getLocalPort());
    }

    private void accept() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                threads.submit(() -> relay(client));
            } catch (IOException closed) {
                return;
            }
        }
    }

    private void relay(Socket client) {
        try (client; Socket server = new Socket(InetAddress.getLoopbackAddress(), targetPort)) {
            InputStream request = client.getInputStream();
            OutputStream upstream = server.getOutputStream();
            threads.submit(() -> copy(request, upstream, server));
            int limit = cutAfter.get();
            InputStream in = server.getInputStream();
            OutputStream out = client.getOutputStream();
            byte[] buffer = new byte[8192];
            int events = 0;
            byte previous = 0;
            for (int n; (n = in.read(buffer)) > 0; ) {
                int end = n;
                for (int i = 0; i < n && limit > 0; i++) {
                    if (buffer[i] == '\n' && previous == '\n' && ++events == limit) {
                        end = i + 1;
                        break;
                    }
                    previous = buffer[i];
                }
                out.write(buffer, 0, end);
                out.flush();
                if (limit > 0 && events == limit) {
                    cuts.incrementAndGet();
                    return; // closes both sides mid-answer
                }
            }
        } catch (IOException ignored) {
            // either side went away: so does the other
        }
    }

    private static void copy(InputStream in, OutputStream out, Socket server) {
        try {
            in.transferTo(out);
            server.shutdownOutput();
        } catch (IOException ignored) {
            // the relay closed the sockets
        }
    }

    @Override
    public void close() {
        try {
            listener.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        threads.shutdownNow();
    }
}
