package dev.lazarus.kt.gguf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class GgufRoundTripTest {

    @TempDir
    Path dir;

    @Test
    void metadataOfEveryTypeSurvivesARoundTrip() {
        Path file = dir.resolve("md.gguf");
        new GgufWriter()
                .putString("general.architecture", "llama")
                .putString("utf8", "héllo ✓ 🦙")
                .putU8("u8", 255).putI8("i8", -128).putU16("u16", 65535).putI16("i16", -32768)
                .putU32("u32", -1).putI32("i32", Integer.MIN_VALUE)
                .putU64("u64", Long.MAX_VALUE).putI64("i64", Long.MIN_VALUE)
                .putF32("f32", 1.5f).putF64("f64", Math.PI).putBool("yes", true).putBool("no", false)
                .putArray("strings", GgufValueType.STRING, List.of("a", "", "ß"))
                .putArray("ints", GgufValueType.INT32, List.of(1, -2, 3))
                .putArray("u8s", GgufValueType.UINT8, List.of(0, 200))
                .putArray("floats", GgufValueType.FLOAT32, List.of(0.5f, -1f))
                .putArray("bools", GgufValueType.BOOL, List.of(true, false))
                .putArray("empty", GgufValueType.INT64, List.of())
                .write(file);

        try (GgufFile f = GgufFile.open(file)) {
            assertThat(f.version()).isEqualTo(3);
            assertThat(f.metadata().keySet()).startsWith("general.architecture", "utf8", "u8");
            assertThat(f.architecture()).isEqualTo("llama");
            assertThat(f.string("utf8")).isEqualTo("héllo ✓ 🦙");
            assertThat(f.metadata()).containsEntry("u8", 255).containsEntry("i8", -128).containsEntry("u16", 65535)
                    .containsEntry("i16", -32768).containsEntry("u32", 0xffffffffL).containsEntry("i32", Integer.MIN_VALUE)
                    .containsEntry("u64", Long.MAX_VALUE).containsEntry("i64", Long.MIN_VALUE)
                    .containsEntry("f32", 1.5f).containsEntry("f64", Math.PI).containsEntry("yes", true).containsEntry("no", false);
            assertThat(f.integer("u32")).isEqualTo(0xffffffffL);
            assertThat(f.integer("u8")).isEqualTo(255);
            assertThat(f.integer("missing", 7)).isEqualTo(7);
            assertThat(f.real("f32", 0)).isEqualTo(1.5f);
            assertThat(f.real("i32", 0)).isEqualTo(Integer.MIN_VALUE);
            assertThat(f.bool("yes", false)).isTrue();
            assertThat(f.array("strings")).containsExactly("a", "", "ß");
            assertThat(f.array("ints")).containsExactly(1, -2, 3);
            assertThat(f.array("u8s")).containsExactly(0, 200);
            assertThat(f.array("floats")).containsExactly(0.5f, -1f);
            assertThat(f.array("bools")).containsExactly(true, false);
            assertThat(f.array("empty")).isEmpty();
            assertThat(f.tensors()).isEmpty();
        }
    }

    @Test
    void accessorsNameFileAndKeyOnMissingOrWrongType() {
        Path file = dir.resolve("keys.gguf");
        new GgufWriter().putString("s", "x").putI32("n", 1).write(file);
        try (GgufFile f = GgufFile.open(file)) {
            assertThatThrownBy(() -> f.string("n")).isInstanceOf(GgufException.class)
                    .hasMessageContaining(file.toString()).hasMessageContaining("'n'").hasMessageContaining("Integer");
            assertThatThrownBy(() -> f.array("nope")).isInstanceOf(GgufException.class)
                    .hasMessageContaining("'nope'").hasMessageContaining("missing");
            assertThatThrownBy(() -> f.integer("s")).isInstanceOf(GgufException.class).hasMessageContaining("'s'");
            assertThatThrownBy(() -> f.tensor("w")).isInstanceOf(GgufException.class).hasMessageContaining("'w'");
            assertThat(f.findTensor("w")).isEmpty();
        }
    }

    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"F32", "F16", "BF16", "Q8_0", "Q4_K", "Q5_K", "Q6_K"})
    void tensorsRoundTripWithinTheTypesPrecision(GgmlType type) {
        Random rnd = new Random(42);
        float[] w = new float[512 * 3];
        for (int i = 0; i < w.length; i++) {
            w[i] = (float) rnd.nextGaussian();
        }
        float[] bias = {1, 2, 3, 4, 5, 6, 7};
        Path file = dir.resolve(type + ".gguf");
        new GgufWriter().putString("general.architecture", "test")
                .addTensor("w", w, new long[] {512, 3}, type)
                .addTensor("bias", bias, new long[] {7}, GgmlType.F32)
                .write(file);

        try (GgufFile f = GgufFile.open(file)) {
            GgufTensorInfo t = f.tensor("w");
            assertThat(t.type()).isEqualTo(type);
            assertThat(t.shape()).containsExactly(512, 3);
            assertThat(t.byteSize()).isEqualTo(type.bytesFor(w.length));
            assertThat(f.data(t).byteSize()).isEqualTo(t.byteSize());
            float[] back = new float[w.length];
            GgmlCodec.decode(type, f.data(t), 0, back, 0, back.length);
            double rel = relativeRmsError(w, back);
            assertThat(rel).as("relative RMS error of %s", type).isLessThanOrEqualTo(maxRelativeError(type));

            float[] b = new float[7];
            GgmlCodec.decode(GgmlType.F32, f.data(f.tensor("bias")), 0, b, 0, 7);
            assertThat(b).containsExactly(bias);
            for (GgufTensorInfo info : f.tensors()) {
                assertThat(info.offset() % 32).isZero();
            }
        }
    }

    @Test
    void generalAlignmentIsHonouredByWriterAndReader() throws Exception {
        Path file = dir.resolve("aligned.gguf");
        new GgufWriter().putU32("general.alignment", 64)
                .addTensor("a", new float[] {1, 2, 3}, new long[] {3}, GgmlType.F32)
                .addTensor("b", new float[] {4, 5}, new long[] {2}, GgmlType.F32)
                .write(file);
        try (GgufFile f = GgufFile.open(file)) {
            assertThat(f.tensor("b").offset()).isEqualTo(64);
            assertThat(f.data(f.tensor("b")).get(ValueLayout.JAVA_FLOAT_UNALIGNED, 4)).isEqualTo(5f);
        }
        assertThat(Files.size(file) % 64).isZero();
    }

    @Test
    void rawBytesAreWrittenVerbatimAndDataIsReadOnly() {
        byte[] raw = new byte[34];
        raw[0] = 0x00;
        raw[1] = 0x3c; // f16 1.0
        for (int i = 0; i < 32; i++) {
            raw[2 + i] = (byte) (i - 16);
        }
        Path file = dir.resolve("raw.gguf");
        new GgufWriter().addTensor("q", GgmlType.Q8_0, new long[] {32}, raw).write(file);
        try (GgufFile f = GgufFile.open(file)) {
            MemorySegment data = f.data(f.tensor("q"));
            assertThat(data.toArray(ValueLayout.JAVA_BYTE)).isEqualTo(raw);
            assertThat(data.isReadOnly()).isTrue();
        }
    }

    @Test
    void splitFilesOpenAsOneModel() {
        Path first = dir.resolve("model-00001-of-00002.gguf");
        Path second = dir.resolve("model-00002-of-00002.gguf");
        new GgufWriter().putString("general.architecture", "llama").putU16("split.no", 0).putU16("split.count", 2)
                .addTensor("a", new float[] {1, 2}, new long[] {2}, GgmlType.F32).write(first);
        new GgufWriter().putU16("split.no", 1).putU16("split.count", 2)
                .addTensor("b", new float[] {3, 4, 5}, new long[] {3}, GgmlType.F32).write(second);

        for (Path opened : List.of(first, second)) {
            try (GgufFile f = GgufFile.open(opened)) {
                assertThat(f.path()).isEqualTo(first);
                assertThat(f.files()).containsExactly(first, second);
                assertThat(f.architecture()).isEqualTo("llama");
                assertThat(f.tensors()).extracting(GgufTensorInfo::name).containsExactly("a", "b");
                assertThat(f.tensor("b").fileIndex()).isEqualTo(1);
                assertThat(f.data(f.tensor("b")).toArray(ValueLayout.JAVA_FLOAT_UNALIGNED)).containsExactly(3, 4, 5);
            }
        }
    }

    @Test
    void dataOfEveryPartIsOfTheRamTiersSegmentClassAndDiesWithTheFile() {
        Path first = dir.resolve("seg-00001-of-00002.gguf");
        Path second = dir.resolve("seg-00002-of-00002.gguf");
        new GgufWriter().putU16("split.count", 2).addTensor("a", new float[] {1, 2}, new long[] {2}, GgmlType.F32).write(first);
        new GgufWriter().putU16("split.count", 2).addTensor("b", new float[] {3}, new long[] {1}, GgmlType.F32).write(second);
        Class<?> copyClass;
        try (Arena arena = Arena.ofConfined()) {
            copyClass = arena.allocate(8, 64).getClass();
        }
        MemorySegment b;
        try (GgufFile f = GgufFile.open(first)) {
            MemorySegment a = f.data(f.tensor("a"));
            b = f.data(f.tensor("b"));
            // one class for mapped weights and RAM-tier copies keeps the kernels' segment accesses monomorphic
            assertThat(a.getClass()).isSameAs(copyClass);
            assertThat(b.getClass()).isSameAs(copyClass);
            assertThat(a.isMapped()).isFalse();
            assertThat(a.isReadOnly()).isTrue();
            assertThat(b.get(ValueLayout.JAVA_FLOAT_UNALIGNED, 0)).isEqualTo(3f);
        }
        assertThat(b.scope().isAlive()).isFalse();
        assertThatThrownBy(() -> b.get(ValueLayout.JAVA_FLOAT_UNALIGNED, 0)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void missingSplitPartIsNamed() {
        Path first = dir.resolve("m-00001-of-00003.gguf");
        new GgufWriter().addTensor("a", new float[] {1}, new long[] {1}, GgmlType.F32).write(first);
        assertThatThrownBy(() -> GgufFile.open(first)).isInstanceOf(GgufException.class)
                .hasMessageContaining("m-00002-of-00003.gguf").hasMessageContaining("missing");
    }

    @Test
    void writerRejectsMismatchedTensors() {
        GgufWriter w = new GgufWriter();
        assertThatThrownBy(() -> w.addTensor("x", new float[10], new long[] {5}, GgmlType.F32))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'x'");
        assertThatThrownBy(() -> w.addTensor("y", new float[16], new long[] {16}, GgmlType.Q8_0))
                .hasMessageContaining("block size 32");
        assertThatThrownBy(() -> w.addTensor("z", GgmlType.F16, new long[] {4}, new byte[7])).hasMessageContaining("8 bytes");
    }

    static double relativeRmsError(float[] expected, float[] actual) {
        double err = 0, norm = 0;
        for (int i = 0; i < expected.length; i++) {
            err += (expected[i] - actual[i]) * (double) (expected[i] - actual[i]);
            norm += expected[i] * (double) expected[i];
        }
        return Math.sqrt(err / norm);
    }

    /** Typical relative RMS error of each type on Gaussian data, with headroom (ggml's own figures are similar). */
    static double maxRelativeError(GgmlType type) {
        return switch (type) {
            case F32 -> 0;
            case F16 -> 1e-3;
            case BF16 -> 5e-3;
            case Q8_0 -> 0.01;
            case Q6_K -> 0.03;
            case Q5_K -> 0.06;
            case Q4_K -> 0.12;
            default -> throw new IllegalArgumentException();
        };
    }
}
