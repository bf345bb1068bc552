package dev.lazarus.kt.tokenizer;

import java.nio.charset.StandardCharsets;
import java.util.PriorityQueue;

/**
 * SentencePiece-style vocabularies ({@code tokenizer.ggml.model = llama}) as llama.cpp's
 * {@code llm_tokenizer_spm}: spaces become {@code ▁}, a space is put in front of text that
 * starts the input or follows a special token (when {@code add_space_prefix}), then adjacent
 * symbols are merged highest token score first (ties: leftmost) as long as the merged text is a
 * token; a symbol that is no token is spelled with byte tokens {@code <0xNN>}, and without those is refused.
 */
final class SpmTokenizer extends VocabularyTokenizer {

    private static final char SPACE_MARK = '\u2581';

    SpmTokenizer(Vocabulary vocab) {
        super(vocab, text -> text.replace(SPACE_MARK, ' ').getBytes(StandardCharsets.UTF_8));
    }

    private record Bigram(float score, int left, int size) {}

    @Override
    protected void encodeText(String fragment, boolean afterSpecial, IntList out) {
        String text = ((vocab.addSpacePrefix && afterSpecial) ? " " + fragment : fragment).replace(' ', SPACE_MARK);
        int[] cps = text.codePoints().toArray();
        int n = cps.length;
        // symbols are code points, addressed by their char offsets in the text
        int[] start = new int[n];
        int[] length = new int[n];
        int[] prev = new int[n];
        int[] next = new int[n];
        int offset = 0;
        for (int i = 0; i < n; i++) {
            start[i] = offset;
            length[i] = Character.charCount(cps[i]);
            offset += length[i];
            prev[i] = i - 1;
            next[i] = i + 1 < n ? i + 1 : -1;
        }
        PriorityQueue<Bigram> queue = new PriorityQueue<>((a, b) ->
                a.score != b.score ? Float.compare(b.score, a.score) : Integer.compare(a.left, b.left));
        for (int i = 1; i < n; i++) {
            offer(queue, text, i - 1, i, start, length);
        }
        while (!queue.isEmpty()) {
            Bigram bigram = queue.poll();
            int left = bigram.left;
            int right = next[left];
            if (length[left] == 0 || right < 0 || length[right] == 0 || length[left] + length[right] != bigram.size) {
                continue;
            }
            length[left] += length[right];
            length[right] = 0;
            next[left] = next[right];
            if (next[right] >= 0) {
                prev[next[right]] = left;
            }
            offer(queue, text, prev[left], left, start, length);
            offer(queue, text, left, next[left], start, length);
        }
        for (int i = 0; i >= 0 && n > 0; i = next[i]) {
            String symbol = text.substring(start[i], start[i] + length[i]);
            int id = vocab.id(symbol);
            if (id != Vocabulary.NONE) {
                out.add(id);
            } else {
                for (byte b : symbol.getBytes(StandardCharsets.UTF_8)) {
                    int token = byteToken(b);
                    if (token == Vocabulary.NONE) {
                        // an unmerged symbol is one code point: merges only make pieces of the vocabulary
                        throw new UnknownCharacterException(symbol.codePointAt(0));
                    }
                    out.add(token);
                }
            }
        }
    }

    private void offer(PriorityQueue<Bigram> queue, String text, int left, int right, int[] start, int[] length) {
        if (left < 0 || right < 0) {
            return;
        }
        int size = length[left] + length[right];
        int id = vocab.id(text.substring(start[left], start[left] + size));
        if (id != Vocabulary.NONE) {
            queue.add(new Bigram(vocab.scores[id], left, size));
        }
    }

    /**
     * The {@code <0xNN>} token of a byte, else the byte as a one-character token, else none: llama.cpp's
     * {@code byte_to_token}, which fails there rather than falling back to {@code <unk>}.
     */
    private int byteToken(byte b) {
        int id = vocab.id(String.format("<0x%02X>", b & 0xFF));
        if (id == Vocabulary.NONE && (b & 0xFF) < 0x80) {
            id = vocab.id(String.valueOf((char) b));
        }
        return id;
    }
}
