package dev.lazarus.kt.tokenizer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PreTokenizerTest {

    private static List<String> words(PreTokenizer pre, String text) {
        return pre.split(text).stream().map(b -> new String(b, StandardCharsets.UTF_8)).toList();
    }

    @Test
    void llama3SplitsWordsContractionsAndDigitGroups() {
        assertThat(words(PreTokenizer.LLAMA3, "Hello world")).containsExactly("Hello", " world");
        assertThat(words(PreTokenizer.LLAMA3, "I'm here, DON'T")).containsExactly("I", "'m", " here", ",", " DON", "'T");
        assertThat(words(PreTokenizer.LLAMA3, "12345 3.14")).containsExactly("123", "45", " ", "3", ".", "14");
        assertThat(words(PreTokenizer.LLAMA3, "1234567")).containsExactly("123", "456", "7");
    }

    @Test
    void llama3WhitespaceRunsLeaveOneSpaceForTheNextWord() {
        assertThat(words(PreTokenizer.LLAMA3, "  spaces   here")).containsExactly(" ", " spaces", "  ", " here");
        assertThat(words(PreTokenizer.LLAMA3, "end  ")).containsExactly("end", "  ");
        assertThat(words(PreTokenizer.LLAMA3, "hello\n\nworld")).containsExactly("hello", "\n\n", "world");
        assertThat(words(PreTokenizer.LLAMA3, "a  \n b")).containsExactly("a", "  \n", " b");
        assertThat(words(PreTokenizer.LLAMA3, "x;\n\ny")).containsExactly("x", ";\n\n", "y");
        assertThat(words(PreTokenizer.LLAMA3, "\tindent")).containsExactly("\tindent");
    }

    @Test
    void llama3UnicodeLettersMarksAndEmoji() {
        assertThat(words(PreTokenizer.LLAMA3, "naïve café")).containsExactly("naïve", " café");
        // a combining mark is not a letter: it ends the word
        assertThat(words(PreTokenizer.LLAMA3, "cafe\u0301!")).containsExactly("cafe", "\u0301!");
        assertThat(words(PreTokenizer.LLAMA3, "hi 👋🏽!")).containsExactly("hi", " 👋🏽!");
        assertThat(words(PreTokenizer.LLAMA3, "日本語のテキスト")).containsExactly("日本語のテキスト");
        assertThat(words(PreTokenizer.LLAMA3, "a\u00A0b")).containsExactly("a", "\u00A0b");
    }

    @Test
    void gpt2IsCaseSensitiveAboutContractionsAndKeepsDigitRuns() {
        assertThat(words(PreTokenizer.GPT2, "don't DON'T")).containsExactly("don", "'t", " DON", "'", "T");
        assertThat(words(PreTokenizer.GPT2, "x 12345")).containsExactly("x", " 12345");
        assertThat(words(PreTokenizer.GPT2, "a\n\nb")).containsExactly("a", "\n", "\n", "b");
        assertThat(words(PreTokenizer.GPT2, "a   b")).containsExactly("a", "  ", " b");
    }

    @Test
    void qwen2SplitsEveryDigitLikeLlamaCpp() {
        assertThat(words(PreTokenizer.QWEN2, "x=12345;")).containsExactly("x", "=", "1", "2", "3", "4", "5", ";");
        assertThat(words(PreTokenizer.QWEN2, "Hello  world\n\n")).containsExactly("Hello", " ", " world", "\n\n");
    }

    @Test
    void defaultSplitsPunctuationBeforeTheGpt2Rules() {
        assertThat(words(PreTokenizer.DEFAULT, "Hi, you 1234!")).containsExactly("Hi", ",", " you", " ", "123", "4", "!");
    }

    @Test
    void deepseekV3KeepsMarksWithLettersAndSplitsCjk() {
        assertThat(words(PreTokenizer.DEEPSEEK3, "Hello, world!")).containsExactly("Hello", ",", " world", "!");
        assertThat(words(PreTokenizer.DEEPSEEK3, "a.b 12345")).containsExactly("a", ".b", " ", "123", "45");
        assertThat(words(PreTokenizer.DEEPSEEK3, "cafe\u0301 中文abc")).containsExactly("cafe\u0301", " ", "中文", "abc");
    }

    @Test
    void deepseekV3ReproducesLlamaCppsAsciiTablesWhereTildeIsNeitherPunctuationNorSymbol() {
        assertThat(words(PreTokenizer.DEEPSEEK3, "a ~~")).containsExactly("a", " ", "~~");
        assertThat(words(PreTokenizer.DEEPSEEK3, "a !!")).containsExactly("a", " !!");
    }

    @Test
    void deepseekLlmSplitsNewlinesAndTrailingSpaces() {
        assertThat(words(PreTokenizer.DEEPSEEK_LLM, "Hi there\n42  ")).containsExactly("Hi", " there", "\n", "42", "  ");
    }

    @ParameterizedTest
    @CsvSource({"llama-bpe,LLAMA3", "llama3,LLAMA3", "qwen2,QWEN2", "deepseek-v3,DEEPSEEK3", "deepseek-llm,DEEPSEEK_LLM",
            "gpt-2,GPT2", "gpt2,GPT2", "default,DEFAULT"})
    void namesMapToKinds(String name, PreTokenizer kind) {
        assertThat(PreTokenizer.named(name)).isEqualTo(kind);
    }

    @Test
    void unknownNameFailsLikeLlamaCpp() {
        assertThatThrownBy(() -> PreTokenizer.named("martian")).isInstanceOf(TokenizerException.class)
                .hasMessageContaining("martian");
        assertThat(PreTokenizer.named(null)).isEqualTo(PreTokenizer.DEFAULT);
    }

    private static final String ALPHABET = "aZé中 \t\n\r0٣.,'sStTmlLvVdDrR!~😀\u0301\u00A0\u2003-_";

    /**
     * The hand-written scanners must agree with the regexes they stand for, evaluated with real
     * Unicode classes, on random text built from the characters where the rules interact.
     */
    @Test
    void scannersAgreeWithTheirRegexesOnRandomText() {
        Pattern llama3 = Pattern.compile("(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+"
                + "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", Pattern.UNICODE_CHARACTER_CLASS);
        Pattern gpt2 = Pattern.compile("'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+",
                Pattern.UNICODE_CHARACTER_CLASS);
        int[] alphabet = ALPHABET.codePoints().toArray();
        Random random = new Random();
        long seed = random.nextLong();
        random.setSeed(seed);
        for (int round = 0; round < 2000; round++) {
            StringBuilder sb = new StringBuilder();
            int length = 1 + random.nextInt(24);
            for (int i = 0; i < length; i++) {
                sb.appendCodePoint(alphabet[random.nextInt(alphabet.length)]);
            }
            String text = sb.toString();
            assertThat(words(PreTokenizer.LLAMA3, text)).as("llama3 split of %s (seed %d)", escape(text), seed)
                    .isEqualTo(regexWords(llama3, text));
            assertThat(words(PreTokenizer.GPT2, text)).as("gpt2 split of %s (seed %d)", escape(text), seed)
                    .isEqualTo(regexWords(gpt2, text));
        }
    }

    private static List<String> regexWords(Pattern p, String text) {
        List<String> out = new ArrayList<>();
        Matcher m = p.matcher(text);
        int done = 0;
        while (m.find()) {
            if (m.start() > done) {
                out.add(text.substring(done, m.start()));
            }
            out.add(m.group());
            done = m.end();
        }
        if (done < text.length()) {
            out.add(text.substring(done));
        }
        return out;
    }

    private static String escape(String s) {
        StringBuilder sb = new StringBuilder();
        s.codePoints().forEach(cp -> sb.append(cp < 0x20 || cp > 0x7E ? String.format("\\u{%X}", cp) : Character.toString(cp)));
        return sb.toString();
    }
}
