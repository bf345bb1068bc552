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
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;

/**
 * The packaged gateway jar as users start it: {@code java -jar} with no flags serves the embedded model (the
 * gateway restarts the JVM with the Vector API module), or, when told not to restart, stops at once with one
 * line naming the flags. Run by failsafe after {@code package} ({@code ./mvnw -B verify}).
 */
class JarLaunchIT {

    private static final Path JAR = Path.of(System.getProperty("lazarus.gateway.jar", "target/gateway.jar"));
    private static final Path JAVA = Path.of(System.getProperty("java.home"), "bin", "java");

    @Test
    void theManifestAllowsNativeAccess() throws IOException {
        try (JarFile jar = new JarFile(JAR.toFile())) {
            assertThat(jar.getManifest().getMainAttributes().getValue("Enable-Native-Access")).isEqualTo("ALL-UNNAMED");
        }
    }

    @Test
    void onAnOlderJavaTheJarSaysWhichVersionItNeedsInOneLineAndExits1() throws Exception {
        Path oldJava = OlderJava.binary();
        Path err = Files.createTempFile("lazarus-it", ".err");
        Process java = new ProcessBuilder(oldJava.toString(), "-jar", JAR.toString())
                .redirectError(err.toFile()).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        assertThat(java.waitFor(60, TimeUnit.SECONDS)).as("stops at once").isTrue();
        assertThat(java.exitValue()).isEqualTo(1);
        assertThat(Files.readAllLines(err).stream().filter(JarLaunchIT::notPickedUpOptions)).singleElement().asString()
                .startsWith("Lazarus needs Java 25 or newer (found " + OlderJava.feature(oldJava.getParent().getParent()));
    }

    @Test
    void withoutRestartingItStopsAtOnceWithOneLineNamingTheFlags() throws Exception {
        Path err = Files.createTempFile("lazarus-it", ".err");
        Process java = new ProcessBuilder(JAVA.toString(), "-Dlazarus.relaunch=false", "-jar", JAR.toString())
                .redirectError(err.toFile()).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        assertThat(java.waitFor(60, TimeUnit.SECONDS)).as("stops at once").isTrue();
        assertThat(java.exitValue()).isEqualTo(2);
        assertThat(Files.readAllLines(err).stream().filter(JarLaunchIT::notPickedUpOptions)).containsExactly(
                "lazarus: the kt-native engine needs the Vector API module:"
                + " start java with --add-modules=jdk.incubator.vector --enable-native-access=ALL-UNNAMED");
    }

    @Test
    void plainJavaDashJarServesTheEmbeddedModel() throws Exception {
        int port;
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        Path log = Files.createTempFile("lazarus-it", ".log");
        Process java = new ProcessBuilder(JAVA.toString(), "-jar", JAR.toString(), "--server.port=" + port,
                "--lazarus.policy.store-path=" + JAR.getParent().resolve("it-policy/" + UUID.randomUUID()))
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            HttpClient http = HttpClient.newHttpClient();
            URI base = URI.create("http://127.0.0.1:" + port);
            long deadline = System.nanoTime() + Duration.ofMinutes(3).toNanos();
            while (!ready(http, base)) {
                assertThat(java.isAlive()).as("running; log: %s", log).isTrue();
                assertThat(System.nanoTime()).as("ready within 3 minutes; log: %s", log).isLessThan(deadline);
                Thread.sleep(250);
            }
            // greedy: the trained default could sample its end-of-turn token before 8 tokens; its greedy path has none
            HttpResponse<String> answer = http.send(HttpRequest.newBuilder(base.resolve("/v1/completions"))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(
                            "{\"model\":\"lazarus-tiny-moe\",\"prompt\":\"Once upon a time\",\"max_tokens\":8,\"temperature\":0}"))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
            assertThat(answer.body()).contains("\"completion_tokens\":8");
            long deadlineLine = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (!Files.readString(log).contains("Lazarus ready") && System.nanoTime() < deadlineLine) {
                Thread.sleep(100);
            }
            List<String> lines = Files.readAllLines(log);
            assertThat(lines.stream().filter(JarLaunchIT::notPickedUpOptions).findFirst()).hasValueSatisfying(first ->
                    assertThat(first).startsWith("lazarus: restarting the JVM with --add-modules=jdk.incubator.vector"));
            // the embedded model's F16 weights run on the Java kernels, the engine's C kernels loaded or not
            assertThat(lines).anySatisfy(l -> assertThat(l).containsPattern(
                    "Lazarus ready on http://127.0.0.1:" + port + "/v1 \\(JIT: C2\\) \\[API keys: off, admin: off\\]: embedded \\(kt-native lazarus-tiny-moe\\): UP, CPU, "
                            + "Java kernels \\(java-vector-(128|256|512): F32,F16\\)"));
            assertThat(lines).noneMatch(l -> l.contains("NoClassDefFoundError"));
            assertThat(java.descendants()).as("the relaunched JVM").isNotEmpty();
        } finally {
            List<ProcessHandle> gateway = java.descendants().toList();
            java.destroy(); // SIGTERM to the JVM the user started: the relaunched one stops with it
            assertThat(java.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(gateway).noneMatch(ProcessHandle::isAlive);
        }
    }

    /** The launcher's note when JAVA_TOOL_OPTIONS or JDK_JAVA_OPTIONS are set (CI machines may set them). */
    private static boolean notPickedUpOptions(String line) {
        return !line.startsWith("Picked up ") && !line.startsWith("NOTE: Picked up ");
    }

    private static boolean ready(HttpClient http, URI base) throws InterruptedException {
        try {
            return http.send(HttpRequest.newBuilder(base.resolve("/actuator/health/readiness")).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
        } catch (IOException e) {
            return false;
        }
    }
}
