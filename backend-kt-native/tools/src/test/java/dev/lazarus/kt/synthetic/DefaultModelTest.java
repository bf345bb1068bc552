package dev.lazarus.kt.synthetic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.gguf.GgufTensorInfo;
import dev.lazarus.kt.testsupport.DefaultModelFile;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The committed default model is what {@link DefaultModel} describes, and the trainer's data has the ChatML shape. */
class DefaultModelTest {

    @Test
    void committedModelHasTheSpecsTensorsAndTheTrainedVocabulary() {
        Path file = DefaultModelFile.path();
        try (GgufFile gguf = GgufFile.open(file)) {
            List<Object> merges = gguf.array("tokenizer.ggml.merges");
            assertThat(merges).hasSize(DefaultModel.MERGES);
            ByteBpeVocab vocab = ByteBpeVocab.fromMerges(merges.stream().map(String.class::cast).toList());
            assertThat(gguf.array("tokenizer.ggml.tokens")).isEqualTo(List.copyOf(vocab.tokens()));
            List<TensorLayout.Entry> layout = TensorLayout.of(DefaultModel.spec(), vocab.size());
            assertThat(gguf.tensors()).hasSize(layout.size());
            long weights = 0;
            for (TensorLayout.Entry t : layout) {
                GgufTensorInfo info = gguf.tensor(t.name());
                assertThat(info.shape()).as(t.name()).isEqualTo(t.shape());
                weights += t.elements();
            }
            assertThat(weights).as("the trainer's count").isEqualTo(4_993_280L);
            assertThat(gguf.string("general.name")).isEqualTo("lazarus-tiny-moe");
            assertThat(gguf.string("general.description")).contains("Brown corpus").contains("validation loss")
                    .doesNotContainIgnoringCase("synthetic");
        }
    }

    @Test
    void aDocumentIsItsProseThenItsSentencePairsAsChatTurns() {
        String text = DefaultModel.trainingText(List.of("One.", "Two.", "Three."));
        assertThat(text).isEqualTo("<|endoftext|>One. Two. Three."
                + "<|endoftext|><|im_start|>user\nOne.<|im_end|>\n<|im_start|>assistant\nTwo.<|im_end|>\n");
    }
}
