package dev.lazarus.gateway.realserver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.testsupport.LlamaCpp;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * The official Node.js clients and agent CLIs that {@code scripts/node-clients/setup.sh} installs (into
 * {@code LAZARUS_NODE_CLIENTS}, else {@code <repo>/.node-clients}), run as processes. In CI ({@code CI=true}) a
 * missing install FAILS the test; elsewhere the test is skipped with the command that fixes it, as for llama.cpp.
 */
final class NodeClients {

    /** What a run printed and how it ended. */
    record Run(int exitCode, String stdout, String stderr) {}

    private NodeClients() {
    }

    static Path dir() {
        String env = System.getenv("LAZARUS_NODE_CLIENTS");
        return env != null && !env.isBlank() ? Path.of(env) : LlamaCpp.projectRoot().resolve(".node-clients");
    }

    static void require() {
        if (Files.isDirectory(dir().resolve("node_modules"))) {
            return;
        }
        String reason = "the Node.js clients are not installed in " + dir()
                + ": run bash scripts/node-clients/setup.sh";
        if ("true".equalsIgnoreCase(System.getenv("CI"))) {
            throw new AssertionError("CI=true but " + reason);
        }
        Assumptions.abort(reason);
    }

    /** A CLI the clients install ({@code claude}, {@code codex}). */
    static Path bin(String name) {
        return dir().resolve("node_modules/.bin").resolve(name);
    }

    /** Runs a test script of {@code src/test/resources/node} with the clients on its require path. */
    static Run script(String name, Map<String, String> env, Duration timeout) {
        Path script = Path.of("src/test/resources/node", name).toAbsolutePath();
        return run(List.of("node", script.toString()), env, script.getParent(), timeout);
    }

    /** Runs a command to completion (killed at {@code timeout}), its output captured. */
    static Run run(List<String> command, Map<String, String> env, Path workDir, Duration timeout) {
        require();
        try {
            Path out = Files.createTempFile("node-client", ".out");
            Path err = Files.createTempFile("node-client", ".err");
            ProcessBuilder builder = new ProcessBuilder(command).directory(workDir.toFile())
                    .redirectOutput(out.toFile()).redirectError(err.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
            builder.environment().put("NODE_PATH", dir().resolve("node_modules").toString());
            builder.environment().putAll(env);
            Process process = builder.start();
            boolean done = process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (!done) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            Run run = new Run(done ? process.exitValue() : -1, Files.readString(out, StandardCharsets.UTF_8),
                    Files.readString(err, StandardCharsets.UTF_8));
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
            assertThat(done).as("%s finished within %s; stderr: %s", command.getFirst(), timeout, run.stderr())
                    .isTrue();
            return run;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
