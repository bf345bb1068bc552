package dev.lazarus.kt.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.model.ForwardBatch;
import dev.lazarus.kt.model.Model;
import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.synthetic.SyntheticModels;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The scheduler feeds a sliding-window or hybrid (recurrent) model's prompt in the batches llama-server uses (everything but the last
 * {@link Scheduler#CHECKPOINT_TAIL} tokens, then those), other models' prompts in one: the batch sizes pick the
 * kernels, so this is what keeps a served gpt-oss K-quant model's numbers llama-server's.
 */
class PromptCheckpointTest {

    @TempDir
    static Path dir;

    static final Parallel PARALLEL = Parallel.ofThreads(2);

    @AfterAll
    static void close() {
        PARALLEL.close();
    }

    /** Every forward pass's batch size, the pass itself run by the model's CPU blocks. */
    private static final class RecordingPath implements Model.ForwardPath {
        private final Model model;
        final List<Integer> sizes = new CopyOnWriteArrayList<>();

        RecordingPath(Model model) {
            this.model = model;
        }

        @Override
        public float[][] forward(ForwardBatch batch) {
            sizes.add(batch.size());
            model.useForwardPath(null);
            try {
                return model.forward(batch);
            } finally {
                model.useForwardPath(this);
            }
        }
    }

    private static List<Integer> batches(SyntheticModels.Spec spec, int promptLength) throws Exception {
        Path file = SyntheticModels.write(spec, dir.resolve(spec.name() + ".gguf"));
        try (GgufFile gguf = GgufFile.open(file)) {
            Model model = Model.load(gguf, PARALLEL);
            RecordingPath path = new RecordingPath(model);
            model.useForwardPath(path);
            try (InferenceEngine engine = new InferenceEngine(model, new EngineOptions(256, 4, 8, 64, 0), PARALLEL)) {
                int[] prompt = new int[promptLength];
                for (int i = 0; i < promptLength; i++) {
                    prompt[i] = 40 + i;
                }
                RecordingListener three = new RecordingListener(3);
                engine.submit(prompt, three);
                assertThat(three.awaitEnd()).isEqualTo(EndReason.STOPPED);
            }
            return path.sizes;
        }
    }

    @Test
    void aSlidingWindowModelsLastFourPromptTokensRunAsAStepOfTheirOwn() throws Exception {
        assertThat(batches(SyntheticModels.tinyGptOss(), 10)).containsExactly(6, 4, 1, 1);
        // the budget of 64 tokens a step cuts a long prompt first; the tail still comes alone
        assertThat(batches(SyntheticModels.tinyGptOss(), 70)).containsExactly(64, 2, 4, 1, 1);
        // a prompt of at most 4 tokens is one batch, as llama-server makes no checkpoint inside it
        assertThat(batches(SyntheticModels.tinyGptOss(), 4)).containsExactly(4, 1, 1);
    }

    @Test
    void aHybridModelsLastFourPromptTokensRunAsAStepOfTheirOwn() throws Exception {
        // llama-server checkpoints a recurrent state where it would a sliding window's cache
        assertThat(batches(SyntheticModels.tinyQwen35Moe(), 10)).containsExactly(6, 4, 1, 1);
    }

    @Test
    void otherModelsPromptsRunInOneStep() throws Exception {
        assertThat(batches(SyntheticModels.tinyGlm4Moe(), 10)).containsExactly(10, 1, 1);
    }
}
