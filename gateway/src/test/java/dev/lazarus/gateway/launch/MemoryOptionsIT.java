package dev.lazarus.gateway.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The packaged jar with the JVM options the README gives for memory (read from the README, so that the two stay
 * one): the embedded model still serves under them, and a gateway with only an HTTP backend loads neither the
 * kt-native engine nor the PostgreSQL store's JDBC classes (docs/benchmarks.md#memory-and-jvm-options).
 * Run by failsafe after {@code package} ({@code ./mvnw -B verify}).
 */
public class MemoryOptionsIT {

    private static final Path JAR = Path.of(System.getProperty("lazarus.gateway.jar", "target/gateway.jar"));
    private static final Path JAVA = Path.of(System.getProperty("java.home"), "bin", "java");
    private static final Path README = Path.of("..", "README.md");

    @Test
    void theReadmesMemoryOptionsServeTheEmbeddedModel() throws Exception {
        List<String> options = readmeMemoryOptions();
        assertThat(options).contains("-XX:+UseSerialGC").anyMatch(o -> o.startsWith("-Xmx"));
        int port = freePort();
        Path log = Files.createTempFile("lazarus-it", ".log");
        Process java = start(options, log, "--server.port=" + port,
                "--lazarus.policy.store-path=" + JAR.getParent().resolve("it-policy/" + UUID.randomUUID()));
        try {
            HttpClient http = HttpClient.newHttpClient();
            URI base = URI.create("http://127.0.0.1:" + port);
            awaitStatus(http, base.resolve("/actuator/health/readiness"), java, log);
            HttpResponse<String> answer = http.send(HttpRequest.newBuilder(base.resolve("/v1/completions"))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(
                            "{\"model\":\"lazarus-tiny-moe\",\"prompt\":\"Once upon a time\",\"max_tokens\":8,\"temperature\":0}"))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
            assertThat(answer.body()).contains("\"completion_tokens\":8");
            assertThat(Files.readString(log)).doesNotContain("OutOfMemoryError");
        } finally {
            stop(java);
        }
    }

    @Test
    void anHttpOnlyGatewayLoadsNeitherTheEngineNorJdbc() throws Exception {
        int port = freePort();
        Path log = Files.createTempFile("lazarus-it", ".log");
        Path classes = Files.createTempFile("lazarus-it", ".classes");
        List<String> options = new ArrayList<>(readmeMemoryOptions());
        options.add("-Xlog:class+load=info:file=" + classes);
        // a backend nobody answers: liveness is enough, the classes a route loads are loaded by then
        Process java = start(options, log, "--server.port=" + port, "--lazarus.policy.store-path=",
                "--lazarus.backends[0].id=up", "--lazarus.backends[0].kind=llamacpp",
                "--lazarus.backends[0].settings.url=http://127.0.0.1:9", "--lazarus.backends[0].settings.model-name=m",
                "--lazarus.models[0].name=m", "--lazarus.models[0].backends[0]=up");
        try {
            HttpClient http = HttpClient.newHttpClient();
            URI base = URI.create("http://127.0.0.1:" + port);
            awaitStatus(http, base.resolve("/actuator/health/liveness"), java, log);
            HttpResponse<String> answer = http.send(HttpRequest.newBuilder(base.resolve("/v1/chat/completions"))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertThat(answer.statusCode()).as(answer.body()).isGreaterThanOrEqualTo(500); // the upstream is down
            List<String> loaded = Files.readAllLines(classes).stream()
                    .filter(l -> l.contains(" source: ")).map(l -> l.split(" ")[1]).toList();
            assertThat(loaded).as("the class-load log").contains("dev.lazarus.llamacpp.LlamaCppBackendFactory");
            assertThat(loaded).filteredOn(c -> c.startsWith("dev.lazarus.kt."))
                    .containsExactly("dev.lazarus.kt.backend.KtNativeBackendFactory");
            assertThat(loaded).noneMatch(c -> c.startsWith("org.postgresql.") || c.startsWith("com.zaxxer.hikari.")
                    || c.startsWith("org.flywaydb."));
        } finally {
            stop(java);
        }
    }

    /** The options of README's "for example `java ... --add-modules=...`" under "Memory". */
    public static List<String> readmeMemoryOptions() throws IOException {
        Matcher m = Pattern.compile("for example `java ((?:-\\S+ )+)--add-modules=\\.\\.\\.`").matcher(Files.readString(README));
        assertThat(m.find()).as("README names the memory options as `java ... --add-modules=...`").isTrue();
        return Arrays.asList(m.group(1).trim().split(" "));
    }

    private static Process start(List<String> options, Path log, String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(JAVA.toString()));
        command.addAll(options);
        command.addAll(VectorModuleLaunch.FLAGS);
        command.addAll(List.of("-jar", JAR.toString()));
        command.addAll(List.of(args));
        return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }

    private static void awaitStatus(HttpClient http, URI uri, Process java, Path log) throws Exception {
        long deadline = System.nanoTime() + Duration.ofMinutes(3).toNanos();
        while (!ok(http, uri)) {
            assertThat(java.isAlive()).as("running; log: %s", log).isTrue();
            assertThat(System.nanoTime()).as("ready within 3 minutes; log: %s", log).isLessThan(deadline);
            Thread.sleep(250);
        }
    }

    private static boolean ok(HttpClient http, URI uri) throws InterruptedException {
        try {
            return http.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
        } catch (IOException e) {
            return false;
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket free = new ServerSocket(0)) {
            return free.getLocalPort();
        }
    }

    private static void stop(Process java) throws InterruptedException {
        java.destroy();
        if (!java.waitFor(60, TimeUnit.SECONDS)) {
            java.destroyForcibly();
        }
    }
}
