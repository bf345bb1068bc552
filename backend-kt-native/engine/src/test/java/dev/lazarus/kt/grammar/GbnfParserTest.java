package dev.lazarus.kt.grammar;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** GBNF reading: what it accepts is matched by {@link TextMatch}, what llama-server refuses is refused with a reason. */
class GbnfParserTest {

    @Test
    void refusesWhatLlamaServerRefuses() {
        // each of these gets llama-server's 400 "Failed to initialize samplers: failed to parse grammar"
        assertThatThrownBy(() -> Grammar.parse("root ::= \"a\"  b")).hasMessageContaining("undefined rule identifier 'b'");
        assertThatThrownBy(() -> Grammar.parse("root ::= [a-")).hasMessageContaining("unexpected end of input");
        assertThatThrownBy(() -> Grammar.parse("x ::= \"a\"")).hasMessageContaining("'root'");
        assertThatThrownBy(() -> Grammar.parse("root ::= root \"a\" | \"b\"")).hasMessageContaining("left recursion");
        assertThatThrownBy(() -> Grammar.parse("root ::= \"a\"{3000}")).hasMessageContaining("repetitions");
        assertThatThrownBy(() -> Grammar.parse("root ::= \"\\q\"")).hasMessageContaining("unknown escape");
        assertThatThrownBy(() -> Grammar.parse("root ::= <think>")).hasMessageContaining("no vocab");
        assertThatThrownBy(() -> Grammar.parse("root ::= (\"a\" ")).hasMessageContaining("expecting ')'");
    }

    @Test
    void readsRulesAlternatesGroupsAndComments() {
        Grammar g = Grammar.parse("""
                # a comment
                root ::= greeting ( " " name )?   # trailing comment
                greeting ::= "hi" | "hello"
                name ::= [A-Z] [a-z]*
                """);
        assertThat(TextMatch.matches(g, "hi")).isTrue();
        assertThat(TextMatch.matches(g, "hello Bob")).isTrue();
        assertThat(TextMatch.matches(g, "hello bob")).isFalse();
        assertThat(TextMatch.matches(g, "hey")).isFalse();
    }

    @Test
    void repetitionsCountAsLlamaCppCounts() {
        Grammar g = Grammar.parse("root ::= [a]{2,4} [b]{2} [c]{1,} [d]?");
        assertThat(TextMatch.matches(g, "aabbc")).isTrue();
        assertThat(TextMatch.matches(g, "aaaabbcccd")).isTrue();
        assertThat(TextMatch.matches(g, "abbc")).isFalse();
        assertThat(TextMatch.matches(g, "aaaaabbc")).isFalse();
        assertThat(TextMatch.matches(g, "aabbbc")).isFalse();
        // a bound past 2000 reads as none, as in llama.cpp
        assertThat(TextMatch.matches(Grammar.parse("root ::= \"x\"{0,5000}"), "x".repeat(2500))).isTrue();
    }

    @Test
    void classesNegationRangesEscapesAndUnicode() {
        Grammar g = Grammar.parse("root ::= [^\"\\\\\\x00-\\x1F] [\\u00e0-\\u00ff] \"\\U0001F600\" . [\\-\\]]");
        assertThat(TextMatch.matches(g, "zé😀x-")).isTrue();
        assertThat(TextMatch.matches(g, "zé😀x]")).isTrue();
        assertThat(TextMatch.matches(g, "\"é😀x-")).isFalse();
        assertThat(TextMatch.matches(g, "ze😀x-")).isFalse();
    }

    @Test
    void tokenReferencesByIdAndText() {
        Grammar g = Grammar.parse("root ::= <[7]> !<[3]> <think>", text -> text.equals("<think>") ? new int[] {42}
                : new int[] {1, 2});
        assertThat(g.types).contains(Element.TOKEN, Element.TOKEN_NOT);
        assertThatThrownBy(() -> Grammar.parse("root ::= <two>", text -> new int[] {1, 2}))
                .hasMessageContaining("invalid token '<two>'");
    }
}
