package dev.lazarus.gateway.replicas;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
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
 * One gateway process started from the packaged jar as an operator starts a replica ({@code java
 * -jar} with the Vector API flags, so there is no relaunched child and {@code kill -9} hits the
 * gateway itself), with its configuration on the command line.
 */
final class GatewayReplica implements AutoCloseable {

    static final String ADMIN_TOKEN = "admin-token-5b0e2f7a";
    private static final Path JAR = Path.of(System.getProperty("lazarus.gateway.jar", "target/gateway.jar"));
    private static final Path JAVA = Path.of(System.getProperty("java.home"), "bin", "java");

    final String name;
    final int port;
    final Path log;
    private final List<String> args;
    private Process process;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private GatewayReplica(String name, List<String> args) {
        this.name = name;
        this.port = freePort();
        this.args = args;
        try {
            this.log = Files.createTempFile("lazarus-replica-" + name + "-", ".log");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Starts a replica over the store at {@code jdbcUrl}, routing model {@code m} to oracle and fast. */
    static GatewayReplica start(String name, String jdbcUrl, String password, StubUpstream oracle, StubUpstream fast) {
        GatewayReplica replica = new GatewayReplica(name, List.of(
                "--lazarus.backends[0].id=oracle", "--lazarus.backends[0].kind=openai",
                "--lazarus.backends[0].settings.url=" + oracle.url(),
                "--lazarus.backends[1].id=fast", "--lazarus.backends[1].kind=openai",
                "--lazarus.backends[1].settings.url=" + fast.url(),
                "--lazarus.models[0].name=m", "--lazarus.models[0].backends[0]=oracle",
                "--lazarus.models[0].backends[1]=fast",
                "--lazarus.policy.backends.fast.role=candidate",
                "--lazarus.policy.store=postgres",
                "--lazarus.policy.postgres.url=" + jdbcUrl,
                "--lazarus.policy.postgres.username=postgres",
                "--lazarus.policy.postgres.password=" + password,
                "--lazarus.policy.replica-id=" + name,
                "--lazarus.policy.postgres.figures-interval=500ms",
                "--lazarus.policy.preflight.nvidia-smi=",
                "--lazarus.policy.gate.agreement.enabled=false",
                "--lazarus.health.interval=1s",
                // A breaker that opens after two failed calls, so that one test can open it with two requests.
                "--lazarus.resilience.breaker.minimum-number-of-calls=2",
                "--lazarus.resilience.breaker.sliding-window-size=2",
                "--lazarus.admin.token=" + ADMIN_TOKEN));
        replica.launch();
        return replica;
    }

    void launch() {
        List<String> command = new ArrayList<>(List.of(JAVA.toString(), "-Xmx256m", "-XX:TieredStopAtLevel=1",
                "--add-modules=jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED", "-jar", JAR.toString(),
                "--server.port=" + port));
        command.addAll(args);
        try {
            process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Waits until the replica's readiness probe says UP. */
    void awaitReady(Duration limit) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (status("/actuator/health/readiness") != 200) {
            assertThat(process.isAlive()).as("%s running; log: %s", name, log).isTrue();
            assertThat(System.nanoTime()).as("%s ready within %s; log: %s", name, limit, log).isLessThan(deadline);
            Thread.sleep(200);
        }
    }

    /** SIGKILL: no shutdown hook, no graceful close of anything. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
    }

    /** Appends the gateway's threads to its log: what a request that hangs waits for. */
    void threadDump() throws IOException, InterruptedException {
        Path jcmd = JAVA.resolveSibling("jcmd");
        new ProcessBuilder(jcmd.toString(), Long.toString(process.pid()), "Thread.print").redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start().waitFor(30, TimeUnit.SECONDS);
    }

    boolean alive() {
        return process != null && process.isAlive();
    }

    String logText() {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private int status(String path) {
        try {
            return http.send(HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    URI uri(String path) {
        return URI.create("http://127.0.0.1:" + port + path);
    }

    HttpResponse<String> get(String path, boolean admin) throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(30));
        if (admin) {
            request.header("Authorization", "Bearer " + ADMIN_TOKEN);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> post(String path, String json, boolean admin) throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json));
        if (admin) {
            request.header("Authorization", "Bearer " + ADMIN_TOKEN);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The backend that answered a one-message chat completion through this replica. */
    String chat() throws IOException, InterruptedException {
        HttpResponse<String> answer;
        try {
            answer = post("/v1/chat/completions",
                    "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":4}", false);
        } catch (java.net.http.HttpTimeoutException e) {
            threadDump();
            throw e;
        }
        assertThat(answer.statusCode()).as("%s: %s", name, answer.body()).isEqualTo(200);
        return answer.body().contains("\"content\":\"fast\"") ? "fast"
                : answer.body().contains("\"content\":\"oracle\"") ? "oracle" : answer.body();
    }

    /** The candidate's state as this replica's admin API shows it. */
    String state(String backend) throws IOException, InterruptedException {
        HttpResponse<String> view = get("/admin/backends/" + backend, true);
        assertThat(view.statusCode()).as("%s: %s", name, view.body()).isEqualTo(200);
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"state\":\"([A-Z_]+)\"").matcher(view.body());
        assertThat(m.find()).as(view.body()).isTrue();
        return m.group(1);
    }

    @Override
    public void close() throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroy();
            if (!process.waitFor(40, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(30, TimeUnit.SECONDS);
            }
        }
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
