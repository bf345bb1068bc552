package dev.lazarus.kt.model;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.matrix.WeightMatrices;
import dev.lazarus.kt.tensor.KernelConfig;
import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.synthetic.SyntheticModels;
import dev.lazarus.kt.tensor.NativeKernels;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TensorLoaderTest {

    @TempDir
    Path dir;

    /**
     * Dense Q4_K matrices are copied into the native 16-row layout (148 bytes a row per super-block) wherever native
     * kernels run them, as llama-server repacks the weights of its matrix products; the token embedding, read row by
     * row (get_rows, never repacked by llama-server), stays a view of ggml's blocks (144).
     */
    @Test
    void denseQ4KIsCopiedForTheNativeKernelsAndTheEmbeddingStaysAView() throws Exception {
        Path gguf = SyntheticModels.write(SyntheticModels.tinyQwen3Moe().withWeightType(GgmlType.Q4_K), dir.resolve("q4k.gguf"));
        try (GgufFile file = GgufFile.open(gguf)) {
            TensorLoader loader = new TensorLoader(file, WeightMatrices.defaults());
            var embedding = loader.embedding("token_embd.weight");
            var q = loader.matrix(TensorLoader.block(0, "attn_q"));
            assertThat(embedding.type()).isEqualTo(GgmlType.Q4_K);
            assertThat(q.type()).isEqualTo(GgmlType.Q4_K);
            long blocks = q.cols() / 256;
            assertThat(embedding).extracting("rowBytes").isEqualTo(144L * (embedding.cols() / 256));
            assertThat(q).extracting("rowBytes").isEqualTo((KernelConfig.fromSystemProperties().nativeSelected() ? 148L : 144L) * blocks);
        }
    }
}
