package dev.lazarus.gateway.api;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;

/** A raw socket to the gateway on 127.0.0.1: the bytes go out exactly as written, with bounded reads. */
final class RawHttp implements AutoCloseable {

    final Socket socket;
    private final long opened = System.nanoTime();

    RawHttp(int port) throws IOException {
        socket = new Socket("127.0.0.1", port);
        socket.setSoTimeout(200);
    }

    RawHttp send(String text) throws IOException {
        socket.getOutputStream().write(text.getBytes(StandardCharsets.ISO_8859_1));
        socket.getOutputStream().flush();
        return this;
    }

    /** Sends and reports whether the peer had closed (a write to a closed socket fails, eventually). */
    boolean trySend(String text) {
        try {
            send(text);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Everything the server sends until it closes, or until {@code maxMillis} pass (then null). */
    String readUntilClosed(long maxMillis) throws IOException {
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        long end = System.currentTimeMillis() + maxMillis;
        InputStream in = socket.getInputStream();
        byte[] buffer = new byte[8192];
        while (System.currentTimeMillis() < end) {
            try {
                int n = in.read(buffer);
                if (n < 0) {
                    return got.toString(StandardCharsets.ISO_8859_1);
                }
                got.write(buffer, 0, n);
            } catch (SocketTimeoutException e) {
                // keep waiting
            } catch (IOException e) {
                return got.toString(StandardCharsets.ISO_8859_1); // reset: closed too
            }
        }
        return null;
    }

    /** Reads one response's head and a Content-Length body (for keep-alive exchanges). */
    String readResponse(long maxMillis) throws IOException {
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        long end = System.currentTimeMillis() + maxMillis;
        InputStream in = socket.getInputStream();
        while (System.currentTimeMillis() < end) {
            try {
                int b = in.read();
                if (b < 0) {
                    break;
                }
                got.write(b);
                String text = got.toString(StandardCharsets.ISO_8859_1);
                int headEnd = text.indexOf("\r\n\r\n");
                if (headEnd >= 0) {
                    int length = contentLength(text.substring(0, headEnd));
                    if (text.length() - headEnd - 4 >= length) {
                        return text;
                    }
                }
            } catch (SocketTimeoutException e) {
                // keep waiting
            } catch (IOException e) {
                break; // reset after the answer
            }
        }
        return got.toString(StandardCharsets.ISO_8859_1);
    }

    private static int contentLength(String head) {
        for (String line : head.split("\r\n")) {
            if (line.toLowerCase().startsWith("content-length:")) {
                return Integer.parseInt(line.substring(15).trim());
            }
        }
        return 0;
    }

    double secondsOpen() {
        return (System.nanoTime() - opened) / 1e9;
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
