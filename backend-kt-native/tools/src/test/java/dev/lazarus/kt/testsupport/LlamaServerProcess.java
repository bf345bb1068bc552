package dev.lazarus.kt.testsupport;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real llama-server from the project's Debian chroot, on 127.0.0.1 and a free port, for tests. The PID is
 * llama-server's own (the chroot script execs all the way), so {@link #kill()} is a real crash as a client
 * would see it. Output goes to a log file whose tail is put into every failure message.
 *
 * <pre>{@code
 * LlamaCpp.require();
 * try (LlamaServerProcess server = LlamaServerProcess.start(model, "-c", "2048", "--jinja")) {
 *     String json = server.post("/completion", "{\"prompt\":\"Hi\",\"n_predict\":8}");
 * }
 * }</pre>
 */
public final class LlamaServerProcess implements AutoCloseable {

    private static final Duration STARTUP = Duration.ofSeconds(90);
    private static final Duration REQUEST = Duration.ofSeconds(60);

    private final Process process;
    private final int port;
    private final Path log;
    private final GgmlCpuVariant variant;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private LlamaServerProcess(Process process, int port, Path log, GgmlCpuVariant variant) {
        this.process = process;
        this.port = port;
        this.log = log;
        this.variant = variant;
    }

    /**
     * Starts llama-server on {@code model} with {@code -m model --host 127.0.0.1 --port <free>} plus {@code args}
     * (defaults to 2 threads unless {@code args} say otherwise), held to this host's
     * {@linkplain GgmlCpuVariant#reference() reference CPU variant}, and waits until {@code /health} answers 200.
     */
    public static LlamaServerProcess start(Path model, String... args) {
        return start(GgmlCpuVariant.reference(), model, args);
    }

    /** As {@link #start(Path, String...)}, with ggml held to {@code variant}. */
    public static LlamaServerProcess start(GgmlCpuVariant variant, Path model, String... args) {
        LlamaCpp.require();
        List<String> command = new ArrayList<>(List.of(LlamaCpp.script().toString(), "run",
                LlamaCpp.chrootDir().toString(), "--", "-m", model.toAbsolutePath().toString(), "--host", "127.0.0.1"));
        List<String> extra = List.of(args);
        if (!extra.contains("-t") && !extra.contains("--threads")) {
            command.addAll(List.of("--threads", "2"));
        }
        command.addAll(extra);
        // The port is free when probed; another process could take it before llama-server binds, so retry.
        IllegalStateException last = null;
        for (int attempt = 0; attempt < 3; attempt++) {
            int port = freePort();
            List<String> withPort = new ArrayList<>(command);
            withPort.addAll(List.of("--port", Integer.toString(port)));
            LlamaServerProcess server = launch(withPort, port, variant);
            try {
                server.awaitHealthy();
                return server;
            } catch (IllegalStateException e) {
                boolean portTaken = server.logTail().contains("bind");
                server.close();
                last = e;
                if (!portTaken) {
                    break;
                }
            }
        }
        throw last;
    }

    public URI url() {
        return URI.create("http://127.0.0.1:" + port);
    }

    public int port() {
        return port;
    }

    /** llama-server's own PID. */
    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** SIGKILL, as a crash: no clean shutdown. Waits until the process is gone. */
    public void kill() {
        process.destroyForcibly();
        awaitExit(Duration.ofSeconds(10));
    }

    /** GET {@code path}; throws with the server log unless the status is 2xx. */
    public String get(String path) {
        return send(HttpRequest.newBuilder(url().resolve(path)).timeout(REQUEST).GET().build());
    }

    /** POST a JSON body to {@code path}; throws with the server log unless the status is 2xx. */
    public String post(String path, String json) {
        return send(HttpRequest.newBuilder(url().resolve(path)).timeout(REQUEST)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json)).build());
    }

    /** The ggml CPU variant this llama-server runs on. */
    public GgmlCpuVariant variant() {
        return variant;
    }

    /** What a failure message needs to say about the reference: variant, host CPU and its SIMD flags. */
    public String describe() {
        return "llama-server on ggml CPU variant " + variant.id() + ", host " + GgmlCpuVariant.hostSummary();
    }

    /** Everything llama-server printed so far (token pieces it logs may be partial UTF-8: replaced, not thrown on). */
    public String log() {
        try {
            return new String(Files.readAllBytes(log), java.nio.charset.StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read llama-server's log " + log, e);
        }
    }

    /** The last lines llama-server printed. */
    public String logTail() {
        return LlamaCpp.tail(log);
    }

    /** SIGTERM, then SIGKILL if it has not stopped within 10 s; deletes the log. */
    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroy();
            if (!awaitExit(Duration.ofSeconds(10))) {
                kill();
            }
        }
        try {
            Files.deleteIfExists(log);
        } catch (IOException ignored) {
            // a temp file left behind is harmless
        }
    }

    private static LlamaServerProcess launch(List<String> command, int port, GgmlCpuVariant variant) {
        try {
            Path log = Files.createTempFile("lazarus-llama-server-", ".log");
            ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
            builder.environment().put(GgmlCpuVariant.ENV, variant.id());
            return new LlamaServerProcess(builder.start(), port, log, variant);
        } catch (IOException e) {
            throw new IllegalStateException("cannot start " + command, e);
        }
    }

    private void awaitHealthy() {
        long deadline = System.nanoTime() + STARTUP.toNanos();
        HttpRequest health = HttpRequest.newBuilder(url().resolve("/health")).timeout(Duration.ofSeconds(2)).GET().build();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("llama-server exited with " + process.exitValue() + " while starting:\n" + logTail());
            }
            try {
                if (http.send(health, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for llama-server", e);
            }
            sleep(Duration.ofMillis(100));
        }
        throw new IllegalStateException("llama-server not healthy after " + STARTUP.toSeconds() + " s:\n" + logTail());
    }

    private String send(HttpRequest request) {
        try {
            HttpResponse<String> r = http.send(request, HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() / 100 != 2) {
                throw new IllegalStateException(request.method() + " " + request.uri() + " -> " + r.statusCode() + " "
                        + r.body() + "\nllama-server log:\n" + logTail());
            }
            return r.body();
        } catch (IOException e) {
            throw new IllegalStateException(request.method() + " " + request.uri() + " failed: " + e
                    + "\nllama-server log:\n" + logTail(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    private boolean awaitExit(Duration timeout) {
        try {
            return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException("no free port on 127.0.0.1", e);
        }
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
