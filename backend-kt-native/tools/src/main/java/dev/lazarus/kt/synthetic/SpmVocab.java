package dev.lazarus.kt.synthetic;

import dev.lazarus.kt.gguf.GgufValueType;
import dev.lazarus.kt.gguf.GgufWriter;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A SentencePiece vocabulary of 512 pieces shaped like llama2.c's {@code tok512} (what its small trained checkpoints
 * carry when converted to GGUF): {@code <unk>}, {@code <s>}, {@code </s>}, the 256 byte-fallback pieces
 * {@code <0x00>..<0xFF>}, then word pieces with {@code ▁} for a space, scored so that longer, earlier pieces merge
 * first; {@code tokenizer.ggml.model = llama}, a BOS added, no chat template.
 */
public final class SpmVocab implements Vocab {

    private static final int SIZE = 512;
    private static final String SPACE = "\u2581";
    private static final String[] WORDS = {"the", "and", "to", "of", "a", "in", "is", "it", "that", "was", "he",
            "she", "for", "on", "with", "as", "his", "her", "they", "at", "be", "this", "from", "have", "or", "by",
            "one", "had", "not", "but", "what", "all", "were", "when", "we", "there", "can", "an", "your", "which",
            "their", "said", "if", "do", "will", "each", "about", "how", "up", "out", "them", "then", "many", "some",
            "so", "these", "would", "other", "into", "has", "more", "two", "like", "him", "see", "time", "could", "no",
            "make", "than", "first", "been", "its", "who", "now", "people", "my", "made", "over", "did", "down", "only",
            "way", "find", "use", "may", "water", "long", "little", "very", "after", "words", "called", "just", "where",
            "most", "know", "day", "play", "happy", "big", "dog", "cat", "fox", "quick", "brown", "lazy", "jumps",
            "gateway", "model", "server", "Once", "upon", "Lily", "Tom", "friend", "sun", "tree", "ball", "mom"};
    private static final String[] BIGRAMS = {"th", "he", "in", "er", "an", "re", "on", "at", "en", "nd", "ti", "es",
            "or", "te", "of", "ed", "is", "it", "al", "ar", "st", "to", "nt", "ng", "se", "ha", "as", "ou", "io", "le",
            "ve", "co", "me", "de", "hi", "ri", "ro", "ic", "ne", "ea", "ra", "ce", "li", "ch", "ll", "be", "ma", "si",
            "om", "ur"};

    private final List<String> tokens = new ArrayList<>();
    private final List<Object> scores = new ArrayList<>();
    private final List<Object> types = new ArrayList<>();

    private SpmVocab(boolean byteFallback) {
        add("<unk>", 0f, 2);
        add("<s>", 0f, 3);
        add("</s>", 0f, 3);
        for (int b = 0; byteFallback && b < 256; b++) {
            add("<0x%02X>".formatted(b), 0f, 6);
        }
        Set<String> pieces = new LinkedHashSet<>();
        for (String w : WORDS) {
            pieces.add(SPACE + w);
        }
        for (String bigram : BIGRAMS) {
            pieces.add(bigram);
        }
        pieces.add(SPACE);
        for (char c = 'a'; c <= 'z'; c++) {
            pieces.add(String.valueOf(c));
            pieces.add(SPACE + c);
        }
        for (char c : ".,!?'\"-:;()0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ\n".toCharArray()) {
            pieces.add(String.valueOf(c));
        }
        // the rest: space-led bigrams, as a trained vocabulary has many
        for (int i = 0; pieces.size() < SIZE - tokens.size() && i < BIGRAMS.length; i++) {
            pieces.add(SPACE + BIGRAMS[i]);
        }
        int rank = 0;
        for (String piece : pieces) {
            if (tokens.size() == SIZE) {
                break;
            }
            // longer pieces first, then by rank: merges build words before they build fragments
            add(piece, -rank++ - 1000f / piece.length(), 1);
        }
        if (byteFallback && tokens.size() != SIZE) {
            throw new IllegalStateException("SentencePiece vocabulary has " + tokens.size() + " pieces, not " + SIZE);
        }
    }

    /** The 512-piece vocabulary. */
    public static SpmVocab llama2c512() {
        return new SpmVocab(true);
    }

    /**
     * The same pieces without the byte-fallback ones (fewer than 512 in all), as old SentencePiece conversions
     * are: a character that is no piece can only be spelled with {@code <unk>}.
     */
    public static SpmVocab withoutByteFallback() {
        return new SpmVocab(false);
    }

    private void add(String piece, float score, int type) {
        tokens.add(piece);
        scores.add(score);
        types.add(type);
    }

    @Override
    public int size() {
        return tokens.size();
    }

    @Override
    public void writeTo(GgufWriter w) {
        w.putString("tokenizer.ggml.model", "llama");
        w.putArray("tokenizer.ggml.tokens", GgufValueType.STRING, tokens);
        w.putArray("tokenizer.ggml.scores", GgufValueType.FLOAT32, scores);
        w.putArray("tokenizer.ggml.token_type", GgufValueType.INT32, types);
        w.putU32("tokenizer.ggml.unknown_token_id", 0);
        w.putU32("tokenizer.ggml.bos_token_id", 1);
        w.putU32("tokenizer.ggml.eos_token_id", 2);
        w.putBool("tokenizer.ggml.add_bos_token", true);
        w.putBool("tokenizer.ggml.add_eos_token", false);
    }
}
