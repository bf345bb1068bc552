package dev.lazarus.kt.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * The committed default model ({@code models/lazarus-tiny-moe.gguf}, an engine resource) as a file: the engine's
 * classes directory holds it as one when the tests run against the module's build output, but a reactor build
 * after {@code package} puts the engine's jar on the classpath, and llama-server and memory mapping need a path.
 */
public final class DefaultModelFile {

    public static final String RESOURCE = "models/lazarus-tiny-moe.gguf";

    private static Path copy;

    private DefaultModelFile() {
    }

    public static synchronized Path path() {
        URL url = DefaultModelFile.class.getClassLoader().getResource(RESOURCE);
        if (url == null) {
            throw new IllegalStateException(RESOURCE + " is not on the test classpath");
        }
        try {
            URI uri = url.toURI();
            if ("file".equals(uri.getScheme())) {
                return Path.of(uri);
            }
            if (copy == null) {
                Path file = Files.createTempFile("lazarus-tiny-moe", ".gguf");
                file.toFile().deleteOnExit();
                try (InputStream in = url.openStream()) {
                    Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
                }
                copy = file;
            }
            return copy;
        } catch (URISyntaxException | IOException e) {
            throw new IllegalStateException("cannot read " + RESOURCE, e);
        }
    }
}
