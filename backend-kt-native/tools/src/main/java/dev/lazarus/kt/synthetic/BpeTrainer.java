package dev.lazarus.kt.synthetic;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A small, deterministic byte-level BPE trainer: splits the corpus into words the way the qwen2
 * pre-tokenizer does (so no merge crosses a word boundary llama.cpp would cut at), then repeatedly merges
 * the most frequent adjacent pair of symbols. Ties are broken by the pair's spelling, so the same corpus
 * always gives the same merges on every JVM. Meant for corpora of kilobytes, not gigabytes.
 */
final class BpeTrainer {

    /** The qwen2 / GPT-4-style split: contractions, letter runs, single digits, punctuation runs, whitespace. */
    static final Pattern QWEN2_SPLIT = Pattern.compile(
            "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
                    + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+"
                    + "|\\p{N}"
                    + "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
                    + "|\\s*[\\r\\n]+"
                    + "|\\s+(?!\\S)"
                    + "|\\s+",
            Pattern.UNICODE_CHARACTER_CLASS);

    /** One learnt merge: the two symbols, in vocabulary spelling. */
    record Merge(String left, String right) {
        String joined() {
            return left + right;
        }

        /** The form GGUF stores merges in. */
        @Override
        public String toString() {
            return left + " " + right;
        }
    }

    private BpeTrainer() {
    }

    static List<Merge> train(String corpus, int maxMerges) {
        List<Word> words = countWords(corpus);
        List<Merge> merges = new ArrayList<>(maxMerges);
        while (merges.size() < maxMerges) {
            Merge best = mostFrequentPair(words);
            if (best == null) {
                break;
            }
            merges.add(best);
            for (Word w : words) {
                w.apply(best);
            }
        }
        return merges;
    }

    private static List<Word> countWords(String corpus) {
        // TreeMap: a stable word order, so pair counting and tie-breaking never depend on hashing.
        Map<String, Integer> counts = new TreeMap<>();
        Matcher m = QWEN2_SPLIT.matcher(corpus);
        while (m.find()) {
            counts.merge(m.group(), 1, Integer::sum);
        }
        List<Word> words = new ArrayList<>(counts.size());
        counts.forEach((text, count) -> words.add(new Word(text, count)));
        return words;
    }

    /** The most frequent pair seen at least twice, or null when none is left. */
    private static Merge mostFrequentPair(List<Word> words) {
        Map<Merge, Integer> counts = new HashMap<>();
        for (Word w : words) {
            for (int i = 0; i + 1 < w.symbols.size(); i++) {
                counts.merge(new Merge(w.symbols.get(i), w.symbols.get(i + 1)), w.count, Integer::sum);
            }
        }
        Merge best = null;
        int bestCount = 1;
        for (Map.Entry<Merge, Integer> e : counts.entrySet()) {
            int c = e.getValue();
            if (c > bestCount || (c == bestCount && best != null && compare(e.getKey(), best) < 0)) {
                best = e.getKey();
                bestCount = c;
            }
        }
        return best;
    }

    private static int compare(Merge a, Merge b) {
        int c = a.left().compareTo(b.left());
        return c != 0 ? c : a.right().compareTo(b.right());
    }

    /** A distinct pre-token with its frequency, as the symbols the merges so far have left. */
    private static final class Word {
        final List<String> symbols;
        final int count;

        Word(String text, int count) {
            String spelled = GptBytes.encode(text.getBytes(StandardCharsets.UTF_8));
            this.symbols = new ArrayList<>(Arrays.asList(spelled.split("")));
            this.count = count;
        }

        void apply(Merge merge) {
            for (int i = 0; i + 1 < symbols.size(); i++) {
                if (symbols.get(i).equals(merge.left()) && symbols.get(i + 1).equals(merge.right())) {
                    symbols.set(i, merge.joined());
                    symbols.remove(i + 1);
                }
            }
        }
    }
}
