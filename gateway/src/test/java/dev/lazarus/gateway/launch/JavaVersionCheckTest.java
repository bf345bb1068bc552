package dev.lazarus.gateway.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The jar's Main-Class, {@code JavaVersionCheck} (compiled for Java 8 before the tests, into
 * target/launcher-classes), run on a real older JVM: one line and exit status 1. JarLaunchIT runs the packaged jar
 * on the older JVM too, and on this one (25) through Spring Boot's launcher to a served request.
 */
class JavaVersionCheckTest {

    private static final Path CLASSES = Path.of("target/launcher-classes");

    @Test
    void onAnOlderJavaItSaysWhichVersionItNeedsInOneLineAndExits1() throws Exception {
        Path java = OlderJava.binary();
        int feature = OlderJava.feature(java.getParent().getParent());
        assertThat(CLASSES.resolve("dev/lazarus/gateway/launch/JavaVersionCheck.class")).exists();
        Path err = Files.createTempFile("lazarus-old-java", ".err");
        Process process = new ProcessBuilder(java.toString(), "-cp", CLASSES.toString(),
                "dev.lazarus.gateway.launch.JavaVersionCheck").redirectError(err.toFile())
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).isEqualTo(1);
        assertThat(Files.readAllLines(err).stream().filter(l -> !l.startsWith("Picked up "))).singleElement()
                .asString().startsWith("Lazarus needs Java 25 or newer (found " + feature + " at ");
    }
}
