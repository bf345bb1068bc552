package dev.lazarus.gateway.realserver;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP proxy on loopback in front of a real server that cuts a streamed answer at a chosen event:
 * it passes every byte through until the response has carried {@link #cutAfter} server-sent events
 * (each ends in a blank line, {@code \n\n}; HTTP's own line ends are {@code \r\n}), then closes both
 * connections, as a server that dies between two tokens would. Answers with fewer events (health
 * checks, {@code /props}) pass whole. The cut lands on the same event on any machine, however fast; the progress
 * events a server sends while it reads the prompt (the gateway asks for them) are not counted.
 * With {@link #holdMillis} it holds a {@code POST}'s answer back that long before its first byte, as a server
 * still reading a long prompt does, and with {@link #dropAfterHold} it then closes both connections without
 * an answer, as a server that dies while reading the prompt does.
 */
final class CuttingProxy implements AutoCloseable {

    /** What llama-server's prompt-progress events carry: they tell no token, so they are not counted. */
    private static final byte[] PROGRESS = "\"prompt_progress\"".getBytes(StandardCharsets.US_ASCII);

    private final ServerSocket listener;
    private final int targetPort;
    private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
    /** Events passed before the cut; 0 for none (no cut). */
    final AtomicInteger cutAfter = new AtomicInteger();
    /** Answers cut so far. */
    final AtomicInteger cuts = new AtomicInteger();
    /** How long a POST's answer is held back before its first byte; 0: not at all. */
    final AtomicLong holdMillis = new AtomicLong();
    /** Whether a held POST is then dropped without an answer. */
    final AtomicBoolean dropAfterHold = new AtomicBoolean();
    /** POSTs dropped so far. */
    final AtomicInteger drops = new AtomicInteger();
    /** What the client sent the server, read by read (ISO-8859-1), the last 256 reads: the requests as they went on. */
    final List<String> sent = new CopyOnWriteArrayList<>();

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
            AtomicBoolean posted = new AtomicBoolean();
            threads.submit(() -> copy(request, upstream, server, posted));
            int limit = cutAfter.get();
            InputStream in = server.getInputStream();
            OutputStream out = client.getOutputStream();
            byte[] buffer = new byte[8192];
            int events = 0;
            byte previous = 0;
            // how much of PROGRESS the bytes so far end in, and whether the event being read carries it
            int matched = 0;
            boolean progress = false;
            for (int n; (n = in.read(buffer)) > 0; ) {
                long hold = posted.getAndSet(false) ? holdMillis.get() : 0;
                if (hold > 0) {
                    Thread.sleep(hold);
                    if (dropAfterHold.get()) {
                        drops.incrementAndGet();
                        return;
                    }
                }
                int end = n;
                for (int i = 0; i < n && limit > 0; i++) {
                    matched = buffer[i] == PROGRESS[matched] ? matched + 1 : buffer[i] == PROGRESS[0] ? 1 : 0;
                    if (matched == PROGRESS.length) {
                        progress = true;
                        matched = 0;
                    }
                    if (buffer[i] == '\n' && previous == '\n') {
                        boolean counted = !progress;
                        progress = false;
                        if (counted && ++events == limit) {
                            end = i + 1;
                            break;
                        }
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
        } catch (InterruptedException closing) {
            Thread.currentThread().interrupt();
        }
    }

    /** The client's requests to the server, {@code posted} set before a POST goes on (a connection carries several). */
    private void copy(InputStream in, OutputStream out, Socket server, AtomicBoolean posted) {
        try {
            byte[] buffer = new byte[8192];
            for (int n; (n = in.read(buffer)) > 0; ) {
                String text = new String(buffer, 0, n, StandardCharsets.ISO_8859_1);
                sent.add(text);
                if (sent.size() > 256) {
                    sent.removeFirst();
                }
                if (text.startsWith("POST ")) {
                    posted.set(true);
                }
                out.write(buffer, 0, n);
                out.flush();
            }
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
