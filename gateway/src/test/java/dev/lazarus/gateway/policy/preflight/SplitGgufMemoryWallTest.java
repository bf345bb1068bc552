package dev.lazarus.gateway.policy.preflight;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.gateway.policy.KtMethod;
import dev.lazarus.backend.api.BackendFactories;
import dev.lazarus.backend.api.InferenceBackend;
import dev.lazarus.gateway.policy.PreflightCheck;
import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.gguf.GgufWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The memory wall for a model in local split GGUF files: the kt-native backend reports the bytes of
 * every part (before it has loaded anything), and the wall is checked against their sum, not the
 * first part's, and never left "unknown".
 */
class SplitGgufMemoryWallTest {

    private static final int FLOATS_PER_PART = 64 * 1024; // 256 KiB of weights per part

    @TempDir
    Path dir;

    @Test
    void ktNativeReportsEveryPartAndTheWallChecksTheirSum() throws IOException {
        List<Path> parts = splitModel("moe", 3);
        long whole = parts.stream().mapToLong(SplitGgufMemoryWallTest::size).sum();
        long firstPart = size(parts.getFirst());
        assertThat(whole).isGreaterThan(2 * firstPart);

        try (InferenceBackend kt = BackendFactories.load().create(new BackendConfig("kt", "kt-native",
                Map.of("model", parts.getFirst().toString(), "threads", 1)))) {
            OptionalLong bytes = ModelSizes.fromMetadata(kt);
            assertThat(bytes).hasValue(whole);

            // room for one part but not for three: the wall must hold
            long ram = firstPart + (whole - firstPart) / 2;
            PreflightCheck.Outcome over = Preflight.evaluate(machine(ram), requirement(bytes), 0);
            assertThat(over.passed()).isFalse();
            assertThat(over.reason()).startsWith("model needs " + Preflight.bytes(whole) + " but the memory budget is "
                    + Preflight.bytes(ram));

            PreflightCheck.Outcome fits = Preflight.evaluate(machine(2 * whole), requirement(bytes), 0);
            assertThat(fits.passed()).isTrue();
            assertThat(fits.reason()).contains("model " + Preflight.bytes(whole) + " fits the memory budget")
                    .doesNotContain("unknown");
        }
    }

    @Test
    void aLlamaServersModelPathOfOnePartCountsAllParts() {
        List<Path> parts = splitModel("dense", 2);
        long whole = parts.stream().mapToLong(SplitGgufMemoryWallTest::size).sum();
        assertThat(ModelSizes.sizeOf(Map.of("model_path", parts.getFirst().toString()))).hasValue(whole);
        assertThat(ModelSizes.sizeOf(Map.of("model_path", parts.get(1).toString()))).hasValue(whole);
    }

    @Test
    void aMissingPartLeavesTheSizeUnknownRatherThanWrong() throws IOException {
        List<Path> parts = splitModel("gap", 3);
        Files.delete(parts.get(1));
        assertThat(ModelSizes.sizeOf(Map.of("model_path", parts.getFirst().toString()))).isEmpty();
    }

    /** {@code count} parts named as llama-gguf-split names them, each with a tensor of its own. */
    private List<Path> splitModel(String name, int count) {
        List<Path> parts = new java.util.ArrayList<>();
        for (int i = 1; i <= count; i++) {
            Path part = dir.resolve("%s-%05d-of-%05d.gguf".formatted(name, i, count));
            GgufWriter w = new GgufWriter().putU16("split.no", i - 1).putU16("split.count", count);
            if (i == 1) {
                w.putString("general.architecture", "llama");
            }
            w.addTensor("t" + i, new float[FLOATS_PER_PART], new long[] {FLOATS_PER_PART}, GgmlType.F32).write(part);
            parts.add(part);
        }
        return parts;
    }

    private static Preflight.Requirement requirement(OptionalLong bytes) {
        return new Preflight.Requirement(KtMethod.KT_NATIVE, bytes);
    }

    private static HardwareProfile machine(long ramBytes) {
        return new HardwareProfile("GenuineIntel", "test CPU", Set.of("avx2"), 2, 1, ramBytes, List.of(), List.of());
    }

    private static long size(Path p) {
        try {
            return Files.size(p);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
