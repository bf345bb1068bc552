package dev.lazarus.gateway.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The Docker image starts the gateway with the README's memory options by default (the options
 * {@link MemoryOptionsIT} runs the jar with): its entry point's memory flags, with the image's defaults of the
 * variables they come from, are the README's.
 */
class DockerMemoryOptionsTest {

    private static final Path DOCKERFILE = Path.of("..", "docker", "Dockerfile");

    @Test
    void theImageRunsTheReadmesMemoryOptionsByDefault() throws IOException {
        String dockerfile = Files.readString(DOCKERFILE);
        List<String> launched = new ArrayList<>();
        for (String word : memoryFlags(dockerfile).split(" ")) {
            launched.addAll(Arrays.asList(substituted(word, dockerfile).trim().split(" ")));
        }
        launched.removeIf(String::isEmpty);
        assertThat(launched).containsExactlyInAnyOrderElementsOf(MemoryOptionsIT.readmeMemoryOptions());
    }

    /** The entry point's words between the engine's two flags and {@code -jar}, with $heap as set by default. */
    private static String memoryFlags(String dockerfile) {
        Matcher entry = Pattern.compile("--enable-native-access=ALL-UNNAMED (.*?) -jar ").matcher(dockerfile);
        assertThat(entry.find()).as("the entry point runs java with the engine's flags, then -jar").isTrue();
        Matcher heap = Pattern.compile("\\[ -n \\\\\"\\$LAZARUS_HEAP\\\\\" ] && heap=(\\S+);").matcher(dockerfile);
        assertThat(heap.find()).as("the entry point sets $heap from LAZARUS_HEAP when it is set").isTrue();
        return entry.group(1).replace("$heap", heap.group(1));
    }

    /** A word with its $VAR and ${VAR:-default} replaced by the image's ENV default (or the inline default). */
    private static String substituted(String word, String dockerfile) {
        Matcher m = Pattern.compile("\\$\\{(\\w+):-([^}]*)}|\\$(\\w+)").matcher(word);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String name = m.group(1) != null ? m.group(1) : m.group(3);
            String value = envDefault(dockerfile, name);
            if (value.isEmpty() && m.group(2) != null) {
                value = m.group(2);
            }
            m.appendReplacement(out, Matcher.quoteReplacement(value));
        }
        m.appendTail(out);
        return out.toString();
    }

    private static String envDefault(String dockerfile, String name) {
        Matcher m = Pattern.compile("\\b" + name + "=(\"[^\"]*\"|\\S*)").matcher(dockerfile.substring(dockerfile.indexOf("ENV ")));
        assertThat(m.find()).as("the image sets %s", name).isTrue();
        return m.group(1).replace("\"", "");
    }
}
