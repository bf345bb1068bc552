package dev.lazarus.kt.gguf;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GgufCorruptionTest {

    @TempDir
    Path dir;

    private Path valid() {
        Path file = dir.resolve("valid.gguf");
        new GgufWriter().putString("general.architecture", "llama")
                .addTensor("blk.0.w", new float[256 * 4], new long[] {256, 4}, GgmlType.Q4_K)
                .write(file);
        return file;
    }

    private Path withBytes(String name, byte[] bytes) throws IOException {
        return Files.write(dir.resolve(name), bytes);
    }

    @Test
    void truncatedDataNamesFileTensorAndType() throws IOException {
        byte[] all = Files.readAllBytes(valid());
        Path cut = withBytes("cut.gguf", Arrays.copyOf(all, all.length - 100));
        assertThatThrownBy(() -> GgufFile.open(cut)).isInstanceOf(GgufException.class)
                .hasMessageContaining(cut.toString()).hasMessageContaining("'blk.0.w'").hasMessageContaining("Q4_K")
                .hasMessageContaining("truncated");
    }

    @Test
    void truncatedHeaderNamesWhatWasBeingRead() throws IOException {
        byte[] all = Files.readAllBytes(valid());
        Path cut = withBytes("header.gguf", Arrays.copyOf(all, 60));
        assertThatThrownBy(() -> GgufFile.open(cut)).isInstanceOf(GgufException.class)
                .hasMessageContaining(cut.toString()).hasMessageContaining("general.architecture")
                .hasMessageContaining("truncated");
        Path empty = withBytes("empty.gguf", new byte[0]);
        assertThatThrownBy(() -> GgufFile.open(empty)).isInstanceOf(GgufException.class).hasMessageContaining("truncated");
    }

    @Test
    void badMagicIsReported() throws IOException {
        byte[] all = Files.readAllBytes(valid());
        all[0] = 'X';
        Path bad = withBytes("magic.gguf", all);
        assertThatThrownBy(() -> GgufFile.open(bad)).isInstanceOf(GgufException.class)
                .hasMessageContaining(bad.toString()).hasMessageContaining("not a GGUF file");
    }

    @Test
    void unsupportedVersionIsReported() throws IOException {
        byte[] all = Files.readAllBytes(valid());
        all[4] = 1;
        Path v1 = withBytes("v1.gguf", all);
        assertThatThrownBy(() -> GgufFile.open(v1)).hasMessageContaining("unsupported GGUF version 1");
    }

    @Test
    void tensorBeyondEndOfFileIsReported() throws IOException {
        // a header that places a 4-element f32 tensor at offset 4096 of a data section that has 32 bytes
        Path file = withBytes("beyond.gguf", header("t", 0, new long[] {4}, 4096, 32));
        assertThatThrownBy(() -> GgufFile.open(file)).isInstanceOf(GgufException.class)
                .hasMessageContaining("'t'").hasMessageContaining("F32").hasMessageContaining("truncated");
    }

    @Test
    void unknownTensorTypeIdIsReported() throws IOException {
        Path file = withBytes("type.gguf", header("weird", 99, new long[] {4}, 0, 64));
        assertThatThrownBy(() -> GgufFile.open(file)).isInstanceOf(GgufException.class)
                .hasMessageContaining(file.toString()).hasMessageContaining("'weird'").hasMessageContaining("type id 99");
    }

    @Test
    void unknownMetadataTypeIdAndAbsurdCountsAreReported() throws IOException {
        ByteBuffer b = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(GgufHeaderReader.MAGIC).putInt(3).putLong(0).putLong(1);
        b.putLong(3).put("key".getBytes(StandardCharsets.US_ASCII)).putInt(42);
        Path file = withBytes("mdtype.gguf", b.array());
        assertThatThrownBy(() -> GgufFile.open(file)).hasMessageContaining("'key'").hasMessageContaining("value type id 42");

        ByteBuffer c = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
        c.putInt(GgufHeaderReader.MAGIC).putInt(3).putLong(Long.MAX_VALUE).putLong(0);
        Path huge = withBytes("count.gguf", c.array());
        assertThatThrownBy(() -> GgufFile.open(huge)).hasMessageContaining("tensor count").hasMessageContaining("exceeds");
    }

    @Test
    void missingFileIsReported() {
        Path none = dir.resolve("none.gguf");
        assertThatThrownBy(() -> GgufFile.open(none)).isInstanceOf(GgufException.class)
                .hasMessageContaining(none.toString()).hasMessageContaining("no such file");
    }

    /** A GGUF v3 file with no metadata and one tensor, followed by {@code dataBytes} of data. */
    private static byte[] header(String name, int typeId, long[] shape, long offset, int dataBytes) {
        ByteBuffer b = ByteBuffer.allocate(4096).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(GgufHeaderReader.MAGIC).putInt(3).putLong(1).putLong(0);
        b.putLong(name.length()).put(name.getBytes(StandardCharsets.US_ASCII)).putInt(shape.length);
        for (long d : shape) {
            b.putLong(d);
        }
        b.putInt(typeId).putLong(offset);
        int dataStart = (int) GgufHeaderReader.align(b.position(), 32);
        return Arrays.copyOf(b.array(), dataStart + dataBytes);
    }
}
