package dev.lazarus.gateway.launch;

import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A Java runtime older than 25 on this machine (Debian 12's default java is 17), for the tests of what the jar says
 * on one. .ci/run installs one; in CI its absence fails the test rather than skipping it.
 */
final class OlderJava {

    private static final Pattern VERSION = Pattern.compile("JAVA_VERSION=\"(?:1\\.)?(\\d+)");

    private OlderJava() {}

    /** The {@code java} binary of the newest runtime older than 25, or the test is not run (outside CI). */
    static Path binary() {
        Optional<Path> found = find();
        if (found.isEmpty()) {
            if ("true".equals(System.getenv("CI"))) {
                fail("no Java runtime older than 25 under /usr/lib/jvm or at /usr/bin/java: .ci/run installs one"
                        + " (default-jre-headless)");
            }
            assumeTrue(false, "no Java runtime older than 25 on this machine (install default-jre-headless)");
        }
        return found.orElseThrow();
    }

    static Optional<Path> find() {
        List<Path> homes;
        try (Stream<Path> jvms = Files.isDirectory(Path.of("/usr/lib/jvm")) ? Files.list(Path.of("/usr/lib/jvm")) : Stream.empty()) {
            homes = Stream.concat(jvms, Stream.of(realHome(Path.of("/usr/bin/java")))).filter(h -> h != null).toList();
        } catch (IOException e) {
            return Optional.empty();
        }
        return homes.stream()
                .filter(h -> Files.isExecutable(h.resolve("bin/java")) && feature(h) > 0 && feature(h) < 25)
                .max(Comparator.comparingInt(OlderJava::feature))
                .map(h -> h.resolve("bin/java"));
    }

    private static Path realHome(Path java) {
        try {
            return Files.exists(java) ? java.toRealPath().getParent().getParent() : null;
        } catch (IOException e) {
            return null;
        }
    }

    /** The feature release from the runtime's {@code release} file; 0 when unreadable. */
    static int feature(Path home) {
        try {
            Matcher m = VERSION.matcher(Files.readString(home.resolve("release")));
            return m.find() ? Integer.parseInt(m.group(1)) : 0;
        } catch (IOException e) {
            return 0;
        }
    }
}
