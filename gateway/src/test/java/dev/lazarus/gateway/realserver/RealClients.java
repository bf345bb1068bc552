package dev.lazarus.gateway.realserver;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * The real clients the API tests drive, as installed by {@code scripts/node-clients/setup.sh} (the {@code openai}
 * and agents SDKs, the Codex CLI) and {@code scripts/python-sdk/setup.sh} (openai-python): where they are, and
 * running one to its end. A missing client fails the test in CI and skips it elsewhere, naming the script.
 */
final class RealClients {

    private RealClients() {
    }

    /**
     * One {@code codex exec} turn through the gateway at {@code baseUrl}, with a custom provider of
     * {@code wire_api = "responses"} in a fresh {@code CODEX_HOME}; fails unless it completes.
     */
    static String codexTurn(String baseUrl, String model, String key, int minutes) throws Exception {
        Path codex = nodeClients(repoRoot()).resolve("node_modules/.bin/codex");
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
        String log = run(List.of(codex.toString(), "exec", "--skip-git-repo-check", "Say hi"),
                Map.of("CODEX_HOME", home.toString(), "LAZARUS_API_KEY", key), work, minutes);
        assertThat(log).as(log).contains("provider: lazarus").contains("\ncodex\n").doesNotContain("ERROR");
        return log;
    }

    /** Runs a client to its end (bounded), its output and exit status checked; returns the output. */
    static String run(List<String> command, Map<String, String> env, Path dir, int minutes) throws Exception {
        Path output = Files.createTempFile("lazarus-responses-client", ".log");
        ProcessBuilder builder = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(output.toFile()).redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
        builder.environment().putAll(env);
        Process process = builder.start();
        boolean ended = process.waitFor(minutes, TimeUnit.MINUTES);
        if (!ended) {
            process.destroyForcibly();
        }
        String log = Files.readString(output, StandardCharsets.UTF_8);
        assertThat(ended).as("%s ended within %d minutes:%n%s", command.getFirst(), minutes, log).isTrue();
        assertThat(process.exitValue()).as(log).isZero();
        return log;
    }

    static Path nodeClients(Path repo) {
        return require(Path.of(envOr("LAZARUS_NODE_CLIENTS", repo.resolve(".node-clients").toString())),
                "node_modules/.bin/codex", "scripts/node-clients/setup.sh");
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
        String reason = file + " is not installed in " + dir + " (run " + setup + ")";
        if ("true".equalsIgnoreCase(System.getenv("CI"))) {
            throw new AssertionError("CI=true but " + reason);
        }
        Assumptions.abort(reason);
        return dir;
    }

    static Path repoRoot() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isDirectory(dir.resolve("scripts/node-clients"))) {
                return dir;
            }
        }
        throw new AssertionError("no scripts/node-clients above " + Path.of("").toAbsolutePath());
    }

    /** Where openai-python is unpacked ($LAZARUS_PYTHON_SDK, else the repository's .python-sdk). */
    static Path pythonSdk(Path repo) {
        return require(Path.of(envOr("LAZARUS_PYTHON_SDK", repo.resolve(".python-sdk").toString()))
                .resolve("root/usr/lib/python3/dist-packages"), "openai/__init__.py", "scripts/python-sdk/setup.sh");
    }
}
