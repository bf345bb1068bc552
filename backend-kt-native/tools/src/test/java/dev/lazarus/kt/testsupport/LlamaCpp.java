package dev.lazarus.kt.testsupport;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Where the project's llama.cpp lives: Debian's packages in a sid chroot made by
 * {@code scripts/llama-server-chroot.sh setup} (in CI by {@code .ci/run}). Tests that need it call
 * {@link #require()} first: in CI ({@code CI=true}) a missing llama.cpp FAILS the test, elsewhere the test is
 * skipped with the reason and the command that fixes it.
 */
public final class LlamaCpp {

    private static final String SCRIPT = "scripts/llama-server-chroot.sh";

    private LlamaCpp() {
    }

    /** The repository root: {@code LAZARUS_PROJECT_ROOT} (set by the build), else the nearest parent holding the script. */
    public static Path projectRoot() {
        String env = System.getenv("LAZARUS_PROJECT_ROOT");
        if (env != null && !env.isBlank() && Files.isRegularFile(Path.of(env, SCRIPT))) {
            return Path.of(env).toAbsolutePath();
        }
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve(SCRIPT))) {
                return p;
            }
        }
        throw new IllegalStateException("cannot find " + SCRIPT + " above " + Path.of("").toAbsolutePath()
                + " (set LAZARUS_PROJECT_ROOT)");
    }

    public static Path script() {
        return projectRoot().resolve(SCRIPT);
    }

    /** The chroot: {@code LAZARUS_CHROOT}, else {@code <repo>/.chroot/sid}. */
    public static Path chrootDir() {
        String env = System.getenv("LAZARUS_CHROOT");
        return env != null && !env.isBlank() ? Path.of(env).toAbsolutePath() : projectRoot().resolve(".chroot/sid");
    }

    /** Why llama.cpp cannot be used here, or empty when it can. */
    public static Optional<String> unavailableReason() {
        Path dir = chrootDir();
        if (!Files.isExecutable(dir.resolve("usr/bin/llama-server"))) {
            return Optional.of("no llama-server in " + dir + " (create it as root: " + SCRIPT + " setup)");
        }
        if (!isRoot()) {
            return Optional.of("running llama-server in the chroot " + dir + " needs root");
        }
        return Optional.empty();
    }

    /** Fails in CI, skips elsewhere, when llama.cpp is not available. */
    public static void require() {
        Optional<String> reason = unavailableReason();
        if (reason.isEmpty()) {
            return;
        }
        if ("true".equalsIgnoreCase(System.getenv("CI"))) {
            throw new AssertionError("CI=true but llama.cpp is unavailable: " + reason.get());
        }
        Assumptions.abort("llama.cpp unavailable: " + reason.get());
    }

    /**
     * Runs a llama.cpp tool of the chroot ({@code llama-quantize}, {@code llama-bench}, ...) to completion.
     * Host paths in the arguments work unchanged. Returns its combined output; throws when it fails.
     */
    public static String runTool(String tool, List<String> args, long timeoutSeconds) {
        return runTool(null, tool, args, timeoutSeconds);
    }

    /** As {@link #runTool(String, List, long)}, with ggml held to {@code variant} (null: ggml's own choice). */
    public static String runTool(GgmlCpuVariant variant, String tool, List<String> args, long timeoutSeconds) {
        List<String> command = new ArrayList<>(List.of(script().toString(), "exec", chrootDir().toString(), tool));
        command.addAll(args);
        try {
            Path log = Files.createTempFile("lazarus-" + tool, ".log");
            try {
                ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile())
                        .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
                builder.environment().remove(GgmlCpuVariant.ENV);
                if (variant != null) {
                    builder.environment().put(GgmlCpuVariant.ENV, variant.id());
                }
                Process p = builder.start();
                if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                    p.destroyForcibly().waitFor();
                    throw new IllegalStateException(tool + " did not finish in " + timeoutSeconds + " s: " + tail(log));
                }
                if (p.exitValue() != 0) {
                    throw new IllegalStateException(tool + " failed with exit " + p.exitValue() + ": " + tail(log));
                }
                return Files.readString(log);
            } finally {
                Files.deleteIfExists(log);
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + command, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + tool, e);
        }
    }

    /** Quantizes {@code in} to {@code out} with Debian's llama-quantize ({@code type}: Q4_K_M, Q8_0, ...). */
    public static Path quantize(Path in, Path out, String type) {
        return quantize(in, out, type, null);
    }

    /** As {@link #quantize(Path, Path, String)}, with an importance matrix ({@link ImportanceMatrix}) where not null. */
    public static Path quantize(Path in, Path out, String type, Path imatrix) {
        List<String> args = new ArrayList<>();
        if (imatrix != null) {
            args.addAll(List.of("--imatrix", imatrix.toAbsolutePath().toString()));
        }
        args.addAll(List.of(in.toAbsolutePath().toString(), out.toAbsolutePath().toString(), type));
        runTool("llama-quantize", args, 300);
        return out;
    }

    static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
        } catch (IOException e) {
            return "(no output: " + e.getMessage() + ")";
        }
    }

    private static boolean isRoot() {
        try {
            return ((Number) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).intValue() == 0;
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return false;
        }
    }
}
