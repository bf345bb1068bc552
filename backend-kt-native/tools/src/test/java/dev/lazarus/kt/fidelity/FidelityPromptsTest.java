package dev.lazarus.kt.fidelity;

import dev.lazarus.kt.chat.ChatTemplate;
import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.synthetic.SyntheticModels;
import dev.lazarus.kt.tokenizer.Tokenizer;
import dev.lazarus.kt.tokenizer.Tokenizers;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Prompt files: ids as given, texts through the chat template or raw, comments and mistakes. */
class FidelityPromptsTest {

    static Tokenizer tokenizer;
    static ChatTemplate template;

    @BeforeAll
    static void vocabulary(@TempDir Path dir) {
        Path model = SyntheticModels.write(SyntheticModels.tinyLlama(), dir.resolve("llama.gguf"));
        try (GgufFile file = GgufFile.open(model)) {
            tokenizer = Tokenizers.fromMetadata(file.metadata());
            template = ChatTemplate.fromMetadata(file.metadata(), tokenizer);
        }
    }

    @Test
    void readsIdsTextsAndJsonStringsAndSkipsCommentsAndBlankLines() {
        List<FidelityPrompt> prompts = FidelityPrompts.parse(List.of(
                "# a comment", "", "[1, 20, 300]", "\"two\\nlines\"", "plain text"), tokenizer, null);

        assertThat(prompts).extracting(FidelityPrompt::name).containsExactly("line-3", "line-4", "line-5");
        assertThat(prompts.get(0).tokens()).containsExactly(1, 20, 300);
        assertThat(prompts.get(1).tokens()).containsExactly(tokenizer.encode("two\nlines", true, true));
        assertThat(prompts.get(2).tokens()).containsExactly(tokenizer.encode("plain text", true, true));
    }

    @Test
    void textsGoThroughTheChatTemplateUnlessRawButIdsNever() {
        List<FidelityPrompt> chat = FidelityPrompts.parse(List.of("[5, 6]", "hello"), tokenizer, template);

        assertThat(chat.get(0).tokens()).containsExactly(5, 6);
        assertThat(tokenizer.decode(chat.get(1).tokens(), true)).contains("<|im_start|>user\nhello<|im_end|>")
                .endsWith("<|im_start|>assistant\n");
    }

    @Test
    void theBuiltInSetHasTheGatePromptsFirst() {
        List<FidelityPrompt> prompts = FidelityPrompts.builtIn(tokenizer, null);

        assertThat(prompts).hasSize(FidelityPrompts.BUILT_IN.size());
        assertThat(prompts.getFirst().tokens())
                .containsExactly(tokenizer.encode("Explain quantum entanglement in simple terms.", true, true));
    }

    @Test
    void mistakesNameTheLine() {
        assertThatThrownBy(() -> FidelityPrompts.parse(List.of("ok", "[1, -2]"), tokenizer, null))
                .hasMessageContaining("non-negative integers");
        assertThatThrownBy(() -> FidelityPrompts.parse(List.of("[1, 2"), tokenizer, null))
                .hasMessageContaining("line-1: not valid JSON");
        assertThatThrownBy(() -> FidelityPrompts.parse(List.of("[]"), tokenizer, null))
                .hasMessageContaining("line-1 has no tokens");
        assertThatThrownBy(() -> FidelityPrompts.parse(List.of("# only", " "), tokenizer, null))
                .hasMessageContaining("no prompts");
    }
}
