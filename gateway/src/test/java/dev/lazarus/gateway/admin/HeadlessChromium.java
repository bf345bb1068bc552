package dev.lazarus.gateway.admin;

import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Debian's Chromium, headless, driven through the DevTools protocol (CDP) over the JDK's WebSocket client: the
 * few commands a page test needs (navigate, evaluate, screenshot), with no WebDriver in between. .ci/run installs
 * the browser; in CI a missing one fails the test instead of skipping it.
 */
final class HeadlessChromium implements AutoCloseable {

    private static final List<String> BINARIES = List.of("/usr/bin/chromium", "/usr/bin/chromium-browser",
            "/usr/bin/google-chrome");
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final Process process;
    private final WebSocket socket;
    private final AtomicInteger ids = new AtomicInteger();
    private final Map<Integer, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();

    private HeadlessChromium(Process process, URI page) {
        this.process = process;
        this.socket = HttpClient.newHttpClient().newWebSocketBuilder().connectTimeout(WAIT)
                .buildAsync(page, new Listener()).orTimeout(WAIT.toSeconds(), TimeUnit.SECONDS).join();
    }

    static HeadlessChromium start(Path profile) throws IOException, InterruptedException {
        String binary = BINARIES.stream().filter(b -> Files.isExecutable(Path.of(b))).findFirst().orElse(null);
        if (binary == null) {
            if ("true".equals(System.getenv("CI"))) {
                fail("Chromium is not installed: .ci/run installs Debian's chromium package");
            }
            assumeTrue(false, "Chromium is not installed (apt-get install chromium)");
        }
        Process process = new ProcessBuilder(binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--window-size=1400,900", "--user-data-dir=" + profile,
                "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", "about:blank")
                .redirectErrorStream(true).redirectOutput(profile.resolveSibling(profile.getFileName() + ".log").toFile())
                .start();
        try {
            Path activePort = profile.resolve("DevToolsActivePort");
            await(() -> Files.exists(activePort) && !read(activePort).isBlank(), "Chromium's DevTools port");
            String port = read(activePort).lines().findFirst().orElseThrow();
            JsonNode targets = JSON.readTree(HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + port + "/json/list")).timeout(WAIT).build(),
                    HttpResponse.BodyHandlers.ofString()).body());
            for (JsonNode target : targets) {
                if ("page".equals(target.path("type").asString())) {
                    return new HeadlessChromium(process, URI.create(target.path("webSocketDebuggerUrl").asString()));
                }
            }
            throw new IllegalStateException("Chromium has no page: " + targets);
        } catch (RuntimeException | IOException | InterruptedException e) {
            process.destroyForcibly();
            throw e;
        }
    }

    /** Runs a CDP command and returns its result. */
    JsonNode send(String method, Map<String, Object> params) {
        int id = ids.incrementAndGet();
        CompletableFuture<JsonNode> answer = new CompletableFuture<>();
        pending.put(id, answer);
        socket.sendText(JSON.writeValueAsString(Map.of("id", id, "method", method, "params", params)), true).join();
        JsonNode reply = answer.orTimeout(WAIT.toSeconds(), TimeUnit.SECONDS).join();
        if (reply.has("error")) {
            throw new IllegalStateException(method + ": " + reply.path("error"));
        }
        return reply.path("result");
    }

    void navigate(String url) {
        send("Page.navigate", Map.of("url", url));
    }

    /** The value of a JavaScript expression in the page (promises awaited), as JSON. */
    JsonNode eval(String expression) {
        JsonNode result = send("Runtime.evaluate", Map.of("expression", expression, "returnByValue", true,
                "awaitPromise", true));
        if (result.has("exceptionDetails")) {
            throw new IllegalStateException(expression + ": " + result.path("exceptionDetails"));
        }
        return result.path("result").path("value");
    }

    byte[] screenshot() {
        return Base64.getDecoder().decode(send("Page.captureScreenshot", Map.of("format", "png")).path("data").asString());
    }

    /** Polls {@code condition} until it holds, for at most 30 s. */
    static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("waited " + WAIT.toSeconds() + " s for " + what);
            }
            Thread.sleep(100);
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            return "";
        }
    }

    @Override
    public void close() throws InterruptedException {
        socket.abort();
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly();
        }
    }

    private final class Listener implements WebSocket.Listener {
        private final StringBuilder message = new StringBuilder();

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            message.append(data);
            if (last) {
                JsonNode node = JSON.readTree(message.toString());
                message.setLength(0);
                if (node.has("id")) {
                    CompletableFuture<JsonNode> answer = pending.remove(node.path("id").asInt());
                    if (answer != null) {
                        answer.complete(node);
                    }
                }
            }
            webSocket.request(1);
            return null;
        }
    }
}
