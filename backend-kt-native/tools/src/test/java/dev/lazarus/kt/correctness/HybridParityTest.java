package dev.lazarus.kt.correctness;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.gguf.GgufTensorInfo;
import dev.lazarus.kt.synthetic.SyntheticModels;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A bisection aid for qwen35moe (gated DeltaNet blocks between output-gated full attention, a gated shared expert)
 * against llama-server b11669: with {@code ssm_out} zeroed, the DeltaNet blocks add nothing to the residual stream,
 * so the hidden states are llama-server's (bit for bit on AVX-512 hosts, {@link ParityContract}) exactly when the
 * full attention with its output gate and IMROPE, the experts, the gated shared expert and the norms are. The whole
 * architecture is held bit for bit by {@link GreedyParityTest} and {@link HiddenStateParityTest}
 * ({@link ParityModels#QWEN35MOE} in F32 to Q4_K_M, {@link ParityModels#WIDE_QWEN35MOE} in Q8_0 and Q4_K_M); when
 * those fail and this one holds, the difference is in the DeltaNet blocks ({@code GatedDeltaNet}).
 */
@Tag("llama-server")
class HybridParityTest extends EngineParityFixture {

    @ParameterizedTest(name = "-fa {0}")
    @EnumSource(AttentionMode.class)
    void withoutTheDeltaNetOutputTheHiddenStatesAreBitIdentical(AttentionMode mode) throws IOException {
        Path model = dir.resolve("no-ssm-out.gguf");
        if (!Files.isRegularFile(model)) {
            SyntheticModels.write(SyntheticModels.tinyQwen35Moe(), model);
            zero(model, ".ssm_out.weight");
        }
        try (EngineRunner engine = new EngineRunner(model, parallel, mode.order(1))) {
            HiddenStateParityTest.assertHiddenStateContract(engine, model, "qwen35moe without ssm_out -fa " + mode.flag(),
                    ParityContract.host(), mode);
        }
    }

    /** Overwrites every F32 tensor whose name ends with {@code suffix} with zeros, in place. */
    private static void zero(Path model, String suffix) throws IOException {
        List<long[]> ranges = new ArrayList<>();
        byte[] bytes = Files.readAllBytes(model);
        try (GgufFile f = GgufFile.open(model)) {
            for (GgufTensorInfo t : f.tensors()) {
                if (t.name().endsWith(suffix)) {
                    // the tensor's first bytes (random floats) found in the file give its offset
                    byte[] head = new byte[64];
                    for (int i = 0; i < head.length; i++) {
                        head[i] = f.data(t).get(ValueLayout.JAVA_BYTE, i);
                    }
                    ranges.add(new long[] {indexOf(bytes, head), t.byteSize()});
                }
            }
        }
        assertThat(ranges).isNotEmpty();
        try (RandomAccessFile raf = new RandomAccessFile(model.toFile(), "rw")) {
            for (long[] r : ranges) {
                raf.seek(r[0]);
                raf.write(new byte[Math.toIntExact(r[1])]);
            }
        }
    }

    private static int indexOf(byte[] hay, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= hay.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        throw new IllegalStateException("tensor data not found");
    }
}
