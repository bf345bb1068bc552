package dev.lazarus.kt.tokenizer;

import java.io.ByteArrayOutputStream;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;

/**
 * Byte-level BPE ({@code tokenizer.ggml.model = gpt2}) as llama.cpp's {@code llm_tokenizer_bpe}:
 * the pre-tokenizer cuts text into words, each word's UTF-8 bytes are spelled with GPT-2's byte
 * characters, then adjacent symbols are merged lowest merge rank first (ties: leftmost) with a
 * priority queue, and each final symbol becomes its token (or, failing that, its single characters).
 *
 * <p>Merges are looked up without building strings: every string that occurs in a merge gets a
 * small integer id at load, and a pair of ids maps to the merge's rank and to the merged id.
 */
final class BpeTokenizer extends VocabularyTokenizer {

    private final PreTokenizer pre;
    private final Map<String, Integer> pieceIds = new HashMap<>();
    private final LongIntMap rankOfPair;
    private final LongIntMap mergedPiece;

    BpeTokenizer(Vocabulary vocab, PreTokenizer pre, List<?> merges) {
        super(vocab, BpeTokenizer::byteLevelBytes);
        this.pre = pre;
        this.rankOfPair = new LongIntMap(merges.size());
        this.mergedPiece = new LongIntMap(merges.size());
        for (int rank = 0; rank < merges.size(); rank++) {
            String merge = String.valueOf(merges.get(rank));
            // the separator is the first space after the first character (a piece may itself be a space)
            int space = merge.indexOf(' ', 1);
            String left = space < 0 ? "" : merge.substring(0, space);
            String right = space < 0 ? "" : merge.substring(space + 1);
            long pair = pair(intern(left), intern(right));
            rankOfPair.putIfAbsent(pair, rank);
            mergedPiece.putIfAbsent(pair, intern(left + right));
        }
    }

    private int intern(String piece) {
        return pieceIds.computeIfAbsent(piece, k -> pieceIds.size());
    }

    private static long pair(int left, int right) {
        return ((long) left << 32) | (right & 0xFFFFFFFFL);
    }

    /** A normal token's text in GPT-2 byte characters back to its bytes. */
    private static byte[] byteLevelBytes(String text) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(text.length());
        text.codePoints().forEach(cp -> {
            int b = ByteUnicode.decode(cp);
            if (b >= 0) {
                out.write(b);
            } else {
                out.writeBytes(new String(Character.toChars(cp)).getBytes(java.nio.charset.StandardCharsets.UTF_8));
            }
        });
        return out.toByteArray();
    }

    @Override
    protected void encodeText(String text, boolean afterSpecial, IntList out) {
        for (byte[] wordBytes : pre.split(text)) {
            String word = ByteUnicode.encode(wordBytes);
            if (pre.ignoreMerges()) {
                int whole = vocab.id(word);
                if (whole != Vocabulary.NONE) {
                    out.add(whole);
                    continue;
                }
            }
            mergeWord(word, out);
        }
    }

    private record Bigram(int rank, int left, int right, int leftLength, int rightLength) {}

    /** BPE over one word whose characters each stand for one byte. */
    private void mergeWord(String word, IntList out) {
        int n = word.length();
        int[] start = new int[n];
        int[] length = new int[n];
        int[] piece = new int[n];
        int[] prev = new int[n];
        int[] next = new int[n];
        for (int i = 0; i < n; i++) {
            start[i] = i;
            length[i] = 1;
            piece[i] = pieceIds.getOrDefault(String.valueOf(word.charAt(i)), -1);
            prev[i] = i - 1;
            next[i] = i + 1 < n ? i + 1 : -1;
        }
        PriorityQueue<Bigram> queue = new PriorityQueue<>((a, b) ->
                a.rank != b.rank ? Integer.compare(a.rank, b.rank) : Integer.compare(a.left, b.left));
        for (int i = 1; i < n; i++) {
            offer(queue, i - 1, i, piece, length);
        }
        while (!queue.isEmpty()) {
            Bigram bigram = queue.poll();
            int left = bigram.left;
            int right = bigram.right;
            // symbols only grow, so unchanged lengths mean the pair is still the one queued
            if (length[left] != bigram.leftLength || length[right] != bigram.rightLength
                    || length[left] == 0 || length[right] == 0) {
                continue;
            }
            piece[left] = mergedPiece.get(pair(piece[left], piece[right]), -1);
            length[left] += length[right];
            length[right] = 0;
            next[left] = next[right];
            if (next[right] >= 0) {
                prev[next[right]] = left;
            }
            offer(queue, prev[left], left, piece, length);
            offer(queue, left, next[left], piece, length);
        }
        for (int i = 0; i >= 0 && n > 0; i = next[i]) {
            String symbol = word.substring(start[i], start[i] + length[i]);
            int id = vocab.id(symbol);
            if (id != Vocabulary.NONE) {
                out.add(id);
                continue;
            }
            // llama.cpp falls back to single-byte strings of the symbol's UTF-8: only ASCII ones can be tokens
            for (int k = 0; k < symbol.length(); k++) {
                char c = symbol.charAt(k);
                int single = c < 0x80 ? vocab.id(String.valueOf(c)) : Vocabulary.NONE;
                if (single != Vocabulary.NONE) {
                    out.add(single);
                }
            }
        }
    }

    private void offer(PriorityQueue<Bigram> queue, int left, int right, int[] piece, int[] length) {
        if (left < 0 || right < 0 || piece[left] < 0 || piece[right] < 0) {
            return;
        }
        int rank = rankOfPair.get(pair(piece[left], piece[right]), -1);
        if (rank >= 0) {
            queue.add(new Bigram(rank, left, right, length[left], length[right]));
        }
    }
}
