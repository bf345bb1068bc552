package dev.lazarus.kt.synthetic;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ByteBpeVocabTest {

    private final ByteBpeVocab vocab = ByteBpeVocab.standard();

    @Test
    void firstTokensAreTheBytesInGpt2Spelling() {
        assertThat(vocab.tokens().subList(0, 256)).doesNotHaveDuplicates();
        assertThat(vocab.tokens().get('A')).isEqualTo("A");
        assertThat(vocab.tokens().get(' ')).isEqualTo("Ġ");
        assertThat(vocab.tokens().get('\n')).isEqualTo("Ċ");
        assertThat(vocab.tokens().get(0)).isEqualTo("Ā");
        assertThat(vocab.tokens().get(0xAD)).isEqualTo("Ń"); // soft hyphen is not printable: remapped
        assertThat(vocab.tokens().get(0xE9)).isEqualTo("é");
    }

    @Test
    void theMergesAloneRebuildTheVocabulary() {
        ByteBpeVocab rebuilt = ByteBpeVocab.fromMerges(vocab.merges());
        assertThat(rebuilt.tokens()).isEqualTo(vocab.tokens());
        assertThat(rebuilt.tokenTypes()).isEqualTo(vocab.tokenTypes());
        assertThat(rebuilt.merges()).isEqualTo(vocab.merges());
    }

    @Test
    void everyMergeJoinsTwoTokensIntoAToken() {
        assertThat(vocab.merges()).hasSizeGreaterThan(300);
        for (String merge : vocab.merges()) {
            String[] parts = merge.split(" ");
            assertThat(parts).as(merge).hasSize(2);
            assertThat(vocab.id(parts[0])).as(merge).isPresent();
            assertThat(vocab.id(parts[1])).as(merge).isPresent();
            assertThat(vocab.id(parts[0] + parts[1])).as(merge).isPresent();
        }
        assertThat(vocab.tokens()).doesNotHaveDuplicates();
    }

    @Test
    void commonEnglishAndCodePiecesWereLearnt() {
        assertThat(vocab.id("Ġthe")).isPresent();
        assertThat(vocab.id("Ġreturn")).isPresent();
        assertThat(vocab.id("ĠĠĠ")).isPresent(); // indentation runs
    }

    @Test
    void chatMlControlTokensComeLastAndServeAsBosEosEot() {
        int n = vocab.size();
        assertThat(vocab.tokens().subList(n - 3, n))
                .containsExactly(ByteBpeVocab.END_OF_TEXT, ByteBpeVocab.IM_START, ByteBpeVocab.IM_END);
        assertThat(vocab.tokenTypes().subList(n - 3, n)).containsOnly(ByteBpeVocab.TYPE_CONTROL);
        assertThat(vocab.tokenTypes().subList(0, n - 3)).containsOnly(ByteBpeVocab.TYPE_NORMAL);
        assertThat(vocab.bos()).isEqualTo(n - 3);
        assertThat(vocab.eos()).isEqualTo(n - 1);
        assertThat(vocab.eot()).isEqualTo(n - 1);
    }

    @Test
    void trainingIsDeterministicAndMergesAreRankedByFrequency() {
        ByteBpeVocab again = ByteBpeVocab.train(ByteBpeVocab.builtInCorpus(), 512);
        assertThat(again.tokens()).isEqualTo(vocab.tokens());
        assertThat(again.merges()).isEqualTo(vocab.merges());

        ByteBpeVocab small = ByteBpeVocab.train("abab abab xy", 5);
        // "a b" occurs 4 times, "b a" twice: "a b" first, then "ab ab" (twice); nothing else repeats.
        assertThat(small.merges()).containsExactly("a b", "ab ab");
        assertThat(small.tokens().subList(256, small.size() - 3)).containsExactly("ab", "abab");
    }

    @Test
    void chatTemplateIsChatMlWithHermesToolCalls() {
        String t = ByteBpeVocab.chatTemplate();
        assertThat(t).contains("<|im_start|>", "<|im_end|>", "<tool_call>", "<tools>", "<tool_response>", "add_generation_prompt");
        assertThat(t).doesNotEndWith("\n");
        assertThat(List.of(t.split("\n"))).isNotEmpty();
    }
}
