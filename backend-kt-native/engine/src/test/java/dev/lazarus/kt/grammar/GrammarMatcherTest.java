package dev.lazarus.kt.grammar;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Token-level acceptance as llama.cpp's grammar sampler decides it: the trie walk's mask equals the token-by-token
 * rule for every token along random walks; UTF-8 split over tokens, end of generation only where the grammar may
 * end, empty and invalid texts never.
 */
class GrammarMatcherTest {

    private static final byte[] E_LEAD = {(byte) 0xC3};
    private static final byte[] E_TAIL = {(byte) 0xA9};
    private static final byte[] BAD = {(byte) 0x80, 'a'};

    static List<Integer> allowed(GrammarMatcher m, int vocabSize) {
        float[] logits = new float[vocabSize];
        m.mask(logits);
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < vocabSize; i++) {
            if (logits[i] == 0f) {
                out.add(i);
            }
        }
        return out;
    }

    @Test
    void charactersSplitOverTokens() {
        ByteVocab v = ByteVocab.of("é", E_LEAD, E_TAIL, "x", "éx", "", BAD, "<eos>");
        CompiledGrammar g = new CompiledGrammar("", Grammar.parse("root ::= \"é\" \"x\""), VocabIndex.of(v));
        GrammarMatcher m = g.matcher();
        assertThat(allowed(m, 8)).containsExactly(0, 1, 4); // é, its lead byte, éx; not the tail, x, "", bad, eos
        m.accept(1);
        assertThat(allowed(m, 8)).containsExactly(2); // only the continuation byte finishes it
        m.accept(2);
        assertThat(allowed(m, 8)).containsExactly(3);
        m.accept(3);
        assertThat(m.canEnd()).isTrue();
        assertThat(allowed(m, 8)).containsExactly(7); // complete: only the end
        assertThatThrownBy(() -> g.matcher().accept(3)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void partialCharacterMustFitTheClass() {
        // [^é] refuses é's lead byte only if every character it could start is é: C3 starts U+00C0-U+00FF, so it passes
        ByteVocab v = ByteVocab.of(E_LEAD, new byte[] {(byte) 0xE2}, "a", "<eos>");
        GrammarMatcher ascii = new CompiledGrammar("", Grammar.parse("root ::= [a-z]+"), VocabIndex.of(v)).matcher();
        assertThat(allowed(ascii, 4)).containsExactly(2);
        GrammarMatcher latin = new CompiledGrammar("", Grammar.parse("root ::= [\\u00e0-\\u00ff]"), VocabIndex.of(v)).matcher();
        assertThat(allowed(latin, 4)).containsExactly(0);
    }

    @Test
    void maskEqualsTheTokenByTokenRuleOnJsonSchemaWalks() {
        List<Object> pieces = new ArrayList<>();
        String[] words = {"{", "}", "\"", ":", ",", " ", "\n", "  ", "na", "me", "name", "\"name\"", "\":", "1", "23", "-", ".",
            "e", "true", "false", "null", "[", "]", "é", "x\"", "\\", "\\n", "u", "00", "{\"", "\"}", "a", "b", "ab", "}\n",
            "]}", "é\"", "日本", "\t"};
        pieces.addAll(List.of(words));
        pieces.add(E_LEAD);
        pieces.add(E_TAIL);
        pieces.add(new byte[] {(byte) 0xE6});
        pieces.add(new byte[] {(byte) 0x97, (byte) 0xA5});
        pieces.add("<eos>");
        ByteVocab v = ByteVocab.of(pieces.toArray());
        String gbnf = JsonSchemaGrammar.convert(Map.of("type", "object", "properties",
                Map.of("name", Map.of("type", "string", "maxLength", 4), "n", Map.of("type", "array",
                        "items", Map.of("type", "integer", "minimum", -3, "maximum", 40)))));
        CompiledGrammar g = new CompiledGrammar(gbnf, Grammar.parse(gbnf), VocabIndex.of(v));
        SplittableRandom random = new SplittableRandom(7);
        int checked = 0;
        for (int walk = 0; walk < 40; walk++) {
            GrammarMatcher m = g.matcher();
            for (int step = 0; step < 30; step++) {
                List<Integer> mask = allowed(m, v.vocabSize());
                List<Integer> oneByOne = new ArrayList<>();
                for (int t = 0; t < v.vocabSize(); t++) {
                    if (m.allows(t)) {
                        oneByOne.add(t);
                    }
                }
                assertThat(mask).isEqualTo(oneByOne);
                float[] logits = new float[v.vocabSize()];
                for (int t = 0; t < logits.length; t++) {
                    logits[t] = random.nextInt(3) - 1; // ties: the lowest allowed id among the best wins
                }
                int best = mask.stream().reduce((a, b) -> logits[b] > logits[a] ? b : a).orElse(0);
                assertThat(m.bestAllowed(logits)).isEqualTo(best);
                checked++;
                if (mask.isEmpty()) {
                    break; // this small vocabulary cannot continue (e.g. no hex digit after \\u)
                }
                int pick = mask.get(random.nextInt(mask.size()));
                if (v.isEog(pick)) {
                    break;
                }
                m.accept(pick);
            }
        }
        assertThat(checked).isGreaterThan(200);
    }

    @Test
    void tokenElementsMatchById() {
        ByteVocab v = ByteVocab.of("<think>", "a", "b", "<eos>");
        CompiledGrammar g = new CompiledGrammar("", Grammar.parse("root ::= <[0]> !<[1]>"), VocabIndex.of(v));
        GrammarMatcher m = g.matcher();
        assertThat(allowed(m, 4)).containsExactly(0);
        m.accept(0);
        assertThat(allowed(m, 4)).containsExactly(0, 2);
        m.accept(2);
        assertThat(allowed(m, 4)).containsExactly(3);
    }
}
