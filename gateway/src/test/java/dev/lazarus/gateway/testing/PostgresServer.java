package dev.lazarus.gateway.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;

/**
 * A real PostgreSQL cluster of the tests' own (Debian's {@code postgresql} package): {@code initdb}
 * in a temporary directory, {@code postgres} on 127.0.0.1 on a free port, password authentication
 * over TCP. PostgreSQL refuses to run as root, and the tests run as root here and in CI: then every
 * command runs as the {@code postgres} user ({@code runuser}), in a directory that user owns. In CI
 * a missing installation fails the test; elsewhere it is skipped with the reason.
 */
public final class PostgresServer implements AutoCloseable {

    /** The superuser's password: what the replicas are configured with (and must never log). */
    public static final String PASSWORD = "pg-secret-7c1e93d2";

    private static final Path VERSIONS = Path.of("/usr/lib/postgresql");

    private final Path bin;
    private final Path dir;
    private final int port;

    private PostgresServer(Path bin, Path dir, int port) {
        this.bin = bin;
        this.dir = dir;
        this.port = port;
    }

    /** Creates and starts a cluster; fails in CI, skips elsewhere, when PostgreSQL is not installed. */
    public static PostgresServer start() {
        Path bin = require();
        try {
            Path dir = Files.createTempDirectory("lazarus-pg");
            Path data = dir.resolve("data");
            Path pwfile = dir.resolve("pw");
            Files.writeString(pwfile, PASSWORD + "\n");
            if (isRoot()) {
                run(List.of("chown", "-R", "postgres:postgres", dir.toString()), 30);
            }
            run(asOwner(List.of(bin.resolve("initdb").toString(), "-D", data.toString(), "-U", "postgres",
                    "--pwfile=" + pwfile, "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8",
                    "--no-instructions")), 120);
            PostgresServer server = new PostgresServer(bin, dir, freePort());
            server.resume();
            return server;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The bin directory of the newest installed PostgreSQL. */
    private static Path require() {
        Optional<Path> bin = Optional.empty();
        if (Files.isDirectory(VERSIONS)) {
            try (Stream<Path> versions = Files.list(VERSIONS)) {
                bin = versions.map(v -> v.resolve("bin"))
                        .filter(b -> Files.isExecutable(b.resolve("postgres")) && Files.isExecutable(b.resolve("initdb")))
                        .max(Comparator.comparing(b -> version(b.getParent().getFileName().toString())));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        if (bin.isPresent()) {
            return bin.get();
        }
        String reason = "no PostgreSQL under " + VERSIONS + " (apt-get install -y postgresql)";
        if ("true".equalsIgnoreCase(System.getenv("CI"))) {
            throw new AssertionError("CI=true but PostgreSQL is unavailable: " + reason);
        }
        Assumptions.abort(reason);
        return null;
    }

    private static int version(String name) {
        try {
            return Integer.parseInt(name.replaceAll("\\D.*", ""));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    public String jdbcUrl() {
        return "jdbc:postgresql://127.0.0.1:" + port + "/postgres";
    }

    /** A new empty database; returns its JDBC URL. */
    public String createDatabase(String name) {
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(jdbcUrl(), "postgres", PASSWORD);
             java.sql.Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + name);
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
        return "jdbc:postgresql://127.0.0.1:" + port + "/" + name;
    }

    public int port() {
        return port;
    }

    /** Stops the server (fast shutdown: clients are disconnected), keeping its data. */
    public void stop() {
        run(asOwner(List.of(bin.resolve("pg_ctl").toString(), "-D", dir.resolve("data").toString(), "-m", "fast",
                "-w", "stop")), 60);
    }

    /** Starts it (again) on the same port with the same data; returns once it accepts connections. */
    public void resume() {
        run(asOwner(List.of(bin.resolve("pg_ctl").toString(), "-D", dir.resolve("data").toString(), "-w", "-t", "60",
                "-l", dir.resolve("server.log").toString(), "-o",
                "-c listen_addresses=127.0.0.1 -p " + port + " -k " + dir + " -c fsync=off", "start")), 90);
    }

    @Override
    public void close() {
        try {
            stop();
        } catch (RuntimeException e) {
            // already stopped
        }
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // a temporary directory left behind is harmless
        }
    }

    private static List<String> asOwner(List<String> command) {
        if (!isRoot()) {
            return command;
        }
        List<String> wrapped = new ArrayList<>(List.of("runuser", "-u", "postgres", "--"));
        wrapped.addAll(command);
        return wrapped;
    }

    private static boolean isRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void run(List<String> command, long timeoutSeconds) {
        try {
            Path out = Files.createTempFile("lazarus-pg", ".out");
            Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("timed out after " + timeoutSeconds + " s: " + command);
            }
            String output = Files.readString(out);
            Files.deleteIfExists(out);
            if (p.exitValue() != 0) {
                throw new IllegalStateException("exit " + p.exitValue() + ": " + command + "\n" + output);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
