package dev.lazarus.backend.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A model's bytes: one file, or every part of a split GGUF whichever part is named. */
class ModelFilesTest {

    @TempDir
    Path dir;

    @Test
    void aSplitGgufCountsEveryPartWhicheverIsNamed() throws Exception {
        Path one = Files.write(dir.resolve("ds-00001-of-00002.gguf"), new byte[1000]);
        Path two = Files.write(dir.resolve("ds-00002-of-00002.gguf"), new byte[234]);
        assertThat(ModelFiles.parts(two)).containsExactly(one, two);
        assertThat(ModelFiles.sizeOf(one)).hasValue(1234);
        assertThat(ModelFiles.sizeOf(two)).hasValue(1234);
    }

    @Test
    void aPlainFileIsItselfAndAMissingOneUnknown() throws Exception {
        Path plain = Files.write(dir.resolve("model-q4.gguf"), new byte[77]);
        assertThat(ModelFiles.parts(plain)).containsExactly(plain);
        assertThat(ModelFiles.sizeOf(plain)).hasValue(77);
        assertThat(ModelFiles.sizeOf(dir.resolve("absent.gguf"))).isEmpty();
        Files.write(dir.resolve("half-00001-of-00002.gguf"), new byte[10]);
        assertThat(ModelFiles.sizeOf(dir.resolve("half-00001-of-00002.gguf"))).as("a part is missing").isEmpty();
    }
}
