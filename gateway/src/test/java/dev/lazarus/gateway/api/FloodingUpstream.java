package dev.lazarus.gateway.api;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A real local HTTP server in the shape of llama-server that streams a chat answer as fast as its
 * socket takes it: one chunked-encoding chunk per event, many thousands of events, then {@code [DONE]}.
 * It counts the bytes it got written and the streams still open, so a test sees how far the gateway read
 * ahead of its client and whether a stream it gave up was let go.
 */
final class FloodingUpstream implements AutoCloseable {

    private static final byte[] EVENT = event();

    private final ServerSocket server;
    private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
    private final long eventsPerStream;
    final AtomicLong bytesWritten = new AtomicLong();
    final AtomicInteger openStreams = new AtomicInteger();
    final AtomicInteger streamsStarted = new AtomicInteger();

    FloodingUpstream(long eventsPerStream) throws IOException {
        this.eventsPerStream = eventsPerStream;
        server = new ServerSocket(0, 100, InetAddress.getLoopbackAddress());
        threads.submit(this::accept);
    }

    int port() {
        return server.getLocalPort();
    }

    String baseUrl() {
        return "http://127.0.0.1:" + server.getLocalPort();
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket socket = server.accept();
                // A small send buffer keeps the kernel's share of what the gateway was sent small.
                socket.setSendBufferSize(16 * 1024);
                threads.submit(() -> serve(socket));
            } catch (IOException e) {
                return;
            }
        }
    }

    private void serve(Socket socket) {
        try (socket) {
            InputStream in = socket.getInputStream();
            String head = readHead(in);
            if (head == null) {
                return;
            }
            int length = contentLength(head);
            String request = new String(in.readNBytes(length), StandardCharsets.UTF_8);
            OutputStream out = socket.getOutputStream();
            if (head.startsWith("GET /health")) {
                byte[] body = "{\"status\":\"ok\"}".getBytes(StandardCharsets.US_ASCII);
                out.write(("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + body.length
                        + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                out.write(body);
                out.flush();
                return;
            }
            if (!head.startsWith("POST /v1/chat/completions")) {
                out.write("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                        .getBytes(StandardCharsets.US_ASCII));
                return;
            }
            streamsStarted.incrementAndGet();
            openStreams.incrementAndGet();
            try {
                write(out, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"
                        + "Connection: close\r\n\r\n");
                byte[] size = (Integer.toHexString(EVENT.length) + "\r\n").getBytes(StandardCharsets.US_ASCII);
                byte[] crlf = "\r\n".getBytes(StandardCharsets.US_ASCII);
                long events = maxTokens(request);
                for (long i = 0; i < events; i++) {
                    out.write(size);
                    out.write(EVENT);
                    out.write(crlf);
                    bytesWritten.addAndGet(size.length + EVENT.length + crlf.length);
                }
                byte[] done = "data: [DONE]\n\n".getBytes(StandardCharsets.US_ASCII);
                write(out, Integer.toHexString(done.length) + "\r\n" + new String(done, StandardCharsets.US_ASCII)
                        + "\r\n0\r\n\r\n");
            } finally {
                openStreams.decrementAndGet();
            }
        } catch (IOException e) {
            // the gateway let the stream go
        }
    }

    private void write(OutputStream out, String text) throws IOException {
        byte[] bytes = text.getBytes(StandardCharsets.US_ASCII);
        out.write(bytes);
        out.flush();
        bytesWritten.addAndGet(bytes.length);
    }

    /** An HTTP request's head up to its blank line (ISO-8859-1), or null when the connection ends first. */
    static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        int b;
        while ((b = in.read()) >= 0) {
            head.write(b);
            matched = (b == '\r' || b == '\n') ? matched + 1 : 0;
            if (matched == 4) {
                return head.toString(StandardCharsets.ISO_8859_1);
            }
        }
        return null;
    }

    /** As many events as the request's max_tokens asks, else the default (more than any client reads). */
    private long maxTokens(String body) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"max_tokens\":(\\d+)").matcher(body);
        return m.find() ? Long.parseLong(m.group(1)) : eventsPerStream;
    }

    /** The head's Content-Length, 0 without one. */
    static int contentLength(String head) {
        for (String line : head.split("\r\n")) {
            if (line.toLowerCase().startsWith("content-length:")) {
                return Integer.parseInt(line.substring(15).trim());
            }
        }
        return 0;
    }

    private static byte[] event() {
        String content = "lorem ipsum dolor sit amet ".repeat(8);
        return ("data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,"
                + "\"model\":\"flood\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + content
                + "\"},\"finish_reason\":null}]}\n\n").getBytes(StandardCharsets.US_ASCII);
    }

    @Override
    public void close() throws IOException {
        server.close();
        threads.shutdownNow();
    }
}
