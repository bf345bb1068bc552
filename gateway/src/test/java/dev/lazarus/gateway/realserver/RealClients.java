package dev.lazarus.gateway.realserver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.testsupport.LlamaCpp;
import java.io.File;
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
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The real clients the API tests drive, as installed by {@code scripts/node-clients/setup.sh} (the {@code openai},
 * Anthropic and agents SDKs, the Codex and Claude Code CLIs; into {@code LAZARUS_NODE_CLIENTS}, else
 * {@code <repo>/.node-clients}) and {@code scripts/python-sdk/setup.sh} (openai-python): where they are, and
 * running one to its end. A missing client FAILS the test in CI ({@code CI=true}) and skips it elsewhere, naming
 * the script that installs it.
 */
final class RealClients {

    /** What a run printed and how it ended. */
    record Run(int exitCode, String stdout, String stderr) {}

    private static final String NODE_SETUP = "scripts/node-clients/setup.sh";

    private RealClients() {
    }

    static Path repoRoot() {
        return LlamaCpp.projectRoot();
    }

    /** Where the Node.js clients are installed. */
    static Path nodeClients() {
        return require(nodeClientsDir(), "node_modules", NODE_SETUP);
    }

    /** A CLI the Node.js clients install ({@code claude}, {@code codex}). */
    static Path bin(String name) {
        return require(nodeClientsDir(), "node_modules/.bin/" + name, NODE_SETUP).resolve("node_modules/.bin/" + name);
    }

    /** Where openai-python is unpacked ($LAZARUS_PYTHON_SDK, else the repository's .python-sdk). */
    static Path pythonSdk() {
        return require(Path.of(envOr("LAZARUS_PYTHON_SDK", repoRoot().resolve(".python-sdk").toString()))
                .resolve("root/usr/lib/python3/dist-packages"), "openai/__init__.py", "scripts/python-sdk/setup.sh");
    }

    /** Runs a test script of {@code src/test/resources/node} with the Node.js clients on its require path. */
    static Run script(String name, Map<String, String> env, Duration timeout) {
        nodeClients();
        Path script = Path.of("src/test/resources/node", name).toAbsolutePath();
        return run(List.of("node", script.toString()), env, script.getParent(), timeout);
    }

    /**
     * One {@code codex exec --json} turn through the gateway at {@code baseUrl}, with a custom provider of
     * {@code wire_api = "responses"} in a fresh {@code CODEX_HOME}; fails unless the turn completes with an answer
     * the CLI shows. Its event log (one JSON object a line) says what happened where a human-readable run would not:
     * a turn can end without a message the CLI prints, and Codex reconnects by itself after a failed stream
     * (llama-server fails a random model's stream now and then with "does not match the expected peg-native
     * format"), so only the turn's end and its message are asserted. Returns the log.
     */
    static String codexTurn(String baseUrl, String model, String key, Duration timeout) throws IOException {
        Path codex = bin("codex");
        Path home = Files.createTempDirectory("lazarus-codex-home");
        Files.writeString(home.resolve("config.toml"), """
                model = "%s"
                model_provider = "lazarus"

                [model_providers.lazarus]
                name = "Lazarus"
                base_url = "%s"
                env_key = "LAZARUS_API_KEY"
                wire_api = "responses"
                """.formatted(model, baseUrl));
        Path work = Files.createTempDirectory("lazarus-codex-work");
        String log = runToSuccess(List.of(codex.toString(), "exec", "--json", "--skip-git-repo-check", "Say hi"),
                Map.of("CODEX_HOME", home.toString(), "LAZARUS_API_KEY", key), work, timeout);
        JsonMapper json = JsonMapper.builder().build();
        List<JsonNode> events = log.lines().filter(line -> line.startsWith("{")).map(json::readTree).toList();
        assertThat(events).as(log).anyMatch(e -> e.path("type").asString("").equals("turn.completed"))
                .noneMatch(e -> e.path("type").asString("").equals("turn.failed"));
        assertThat(events).as(log).anyMatch(e -> e.path("type").asString("").equals("item.completed")
                && e.at("/item/type").asString("").equals("agent_message")
                && !e.at("/item/text").asString("").isBlank());
        return log;
    }

    /**
     * One {@code claude -p} turn through the gateway at {@code gateway} ({@code ANTHROPIC_BASE_URL}) as users run
     * it, in a fresh home and without other traffic; fails unless it succeeds. Returns its JSON result.
     */
    static JsonNode claudeTurn(String gateway, String model, String key, Duration timeout) throws IOException {
        Path home = Files.createTempDirectory("lazarus-claude-home");
        Run run = run(List.of(bin("claude").toString(), "-p", "Say hello.", "--output-format", "json"),
                Map.ofEntries(Map.entry("HOME", home.toString()),
                        Map.entry("ANTHROPIC_BASE_URL", gateway),
                        Map.entry("ANTHROPIC_API_KEY", key),
                        Map.entry("ANTHROPIC_MODEL", model),
                        Map.entry("ANTHROPIC_SMALL_FAST_MODEL", model),
                        Map.entry("ANTHROPIC_DEFAULT_HAIKU_MODEL", model),
                        // its own 10-minute request timeout, for a long prompt's prefill on a slow machine
                        Map.entry("API_TIMEOUT_MS", String.valueOf(timeout.toMillis())),
                        Map.entry("DISABLE_TELEMETRY", "1"),
                        Map.entry("DISABLE_ERROR_REPORTING", "1"),
                        Map.entry("DISABLE_AUTOUPDATER", "1"),
                        Map.entry("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")),
                home, timeout);
        JsonNode result = JsonMapper.builder().build().readTree(run.stdout());
        assertThat(result.get("type").asString()).as(run.stdout() + run.stderr()).isEqualTo("result");
        assertThat(result.get("is_error").asBoolean()).as(run.stdout()).isFalse();
        assertThat(result.get("subtype").asString()).isEqualTo("success");
        assertThat(result.at("/usage/input_tokens").asInt() + result.at("/usage/cache_read_input_tokens").asInt())
                .as("Claude Code's whole prompt reached the model").isGreaterThan(10_000);
        assertThat(run.exitCode()).isZero();
        return result;
    }

    /** Runs a command to completion (killed at {@code timeout}, which fails the test), its output captured. */
    static Run run(List<String> command, Map<String, String> env, Path workDir, Duration timeout) {
        return run(command, env, workDir, timeout, false);
    }

    /**
     * Runs a command like {@link #run} with stdout and stderr interleaved as a user would see them; fails unless it
     * exits 0. Returns that output.
     */
    static String runToSuccess(List<String> command, Map<String, String> env, Path workDir, Duration timeout) {
        Run run = run(command, env, workDir, timeout, true);
        assertThat(run.exitCode()).as(run.stdout()).isZero();
        return run.stdout();
    }

    private static Run run(List<String> command, Map<String, String> env, Path workDir, Duration timeout,
            boolean merged) {
        try {
            Path out = Files.createTempFile("lazarus-client", ".out");
            Path err = Files.createTempFile("lazarus-client", ".err");
            ProcessBuilder builder = new ProcessBuilder(command).directory(workDir.toFile())
                    .redirectOutput(out.toFile()).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
            if (merged) {
                builder.redirectErrorStream(true);
            } else {
                builder.redirectError(err.toFile());
            }
            builder.environment().put("NODE_PATH", nodeClientsDir().resolve("node_modules").toString());
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
            assertThat(done).as("%s finished within %s:%n%s%s", command.getFirst(), timeout, run.stdout(), run.stderr())
                    .isTrue();
            return run;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static Path nodeClientsDir() {
        return Path.of(envOr("LAZARUS_NODE_CLIENTS", repoRoot().resolve(".node-clients").toString()));
    }

    private static String envOr(String name, String otherwise) {
        String value = System.getenv(name);
        return value != null && !value.isBlank() ? value : otherwise;
    }

    /** {@code dir} when it holds {@code file}; else fails in CI and skips elsewhere, naming the setup script. */
    private static Path require(Path dir, String file, String setup) {
        if (Files.exists(dir.resolve(file))) {
            return dir;
        }
        String reason = file + " is not installed in " + dir + " (run bash " + setup + ")";
        if ("true".equalsIgnoreCase(System.getenv("CI"))) {
            throw new AssertionError("CI=true but " + reason);
        }
        Assumptions.abort(reason);
        return dir;
    }
}
