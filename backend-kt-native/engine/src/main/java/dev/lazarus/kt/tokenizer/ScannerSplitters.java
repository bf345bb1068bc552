package dev.lazarus.kt.tokenizer;

/**
 * Hand-written equivalents of the two most used split regexes. llama.cpp does not run these two
 * through a regex engine but through hand-written scanners whose behaviour is the reference, so
 * they are reproduced rule by rule here rather than approximated with {@link java.util.regex}.
 *
 * <ul>
 *   <li>GPT-2: {@code 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+}</li>
 *   <li>Llama 3: {@code (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+}</li>
 * </ul>
 */
final class ScannerSplitters {

    private ScannerSplitters() {}

    static final Splitter GPT2 = (cps, lengths) -> scanAll(cps, lengths, false);
    static final Splitter LLAMA3 = (cps, lengths) -> scanAll(cps, lengths, true);

    private static IntList scanAll(int[] cps, IntList lengths, boolean llama3) {
        IntList out = new IntList(lengths.size() * 4);
        int start = 0;
        for (int i = 0; i < lengths.size(); i++) {
            Chunk chunk = new Chunk(cps, start, start + lengths.get(i), out);
            if (llama3) {
                chunk.scanLlama3();
            } else {
                chunk.scanGpt2();
            }
            start += lengths.get(i);
        }
        return out;
    }

    /** One chunk being scanned; positions outside it read as "no character". */
    private static final class Chunk {
        private final int[] cps;
        private final int begin;
        private final int end;
        private final IntList out;
        private int emitted;

        Chunk(int[] cps, int begin, int end, IntList out) {
            this.cps = cps;
            this.begin = begin;
            this.end = end;
            this.out = out;
            this.emitted = begin;
        }

        private boolean present(int pos) {
            return pos >= begin && pos < end;
        }

        private int cp(int pos) {
            return present(pos) ? cps[pos] : -1;
        }

        private boolean letter(int pos) {
            return present(pos) && CodepointClass.isLetter(cps[pos]);
        }

        private boolean number(int pos) {
            return present(pos) && CodepointClass.isNumber(cps[pos]);
        }

        private boolean space(int pos) {
            return present(pos) && CodepointClass.isWhitespace(cps[pos]);
        }

        /** Neither whitespace, letter nor number: what {@code [^\s\p{L}\p{N}]} matches. */
        private boolean other(int pos) {
            return present(pos) && !space(pos) && !letter(pos) && !number(pos);
        }

        private int emit(int to) {
            if (to > emitted) {
                out.add(to - emitted);
            }
            emitted = to;
            return to;
        }

        /** Length of a contraction ('s 't 'm 'd 're 've 'll) starting at pos, or 0. */
        private int contraction(int pos, boolean ignoreCase) {
            if (cp(pos) != '\'' || !present(pos + 1)) {
                return 0;
            }
            int next = ignoreCase ? CodepointClass.toLower(cp(pos + 1)) : cp(pos + 1);
            if (next == 's' || next == 't' || next == 'm' || next == 'd') {
                return 2;
            }
            if (present(pos + 2)) {
                int after = ignoreCase ? CodepointClass.toLower(cp(pos + 2)) : cp(pos + 2);
                if ((next == 'r' && after == 'e') || (next == 'v' && after == 'e') || (next == 'l' && after == 'l')) {
                    return 3;
                }
            }
            return 0;
        }

        void scanGpt2() {
            int pos = begin;
            while (pos < end) {
                int c = cp(pos);
                int contraction = contraction(pos, false);
                if (contraction > 0) {
                    pos = emit(pos + contraction);
                    continue;
                }
                int probe = c == ' ' ? pos + 1 : pos;
                if (letter(probe)) {
                    pos = probe;
                    while (letter(pos)) {
                        pos++;
                    }
                    pos = emit(pos);
                    continue;
                }
                if (number(probe)) {
                    pos = probe;
                    while (number(pos)) {
                        pos++;
                    }
                    pos = emit(pos);
                    continue;
                }
                if (other(probe)) {
                    pos = probe;
                    while (other(pos)) {
                        pos++;
                    }
                    pos = emit(pos);
                    continue;
                }
                pos = whitespace(pos, false);
            }
        }

        void scanLlama3() {
            int pos = begin;
            while (pos < end) {
                int c = cp(pos);
                int contraction = contraction(pos, true);
                if (contraction > 0) {
                    pos = emit(pos + contraction);
                    continue;
                }
                // [^\r\n\p{L}\p{N}]?\p{L}+ : any one non-newline, non-number character may lead a word
                if (!(c == '\r' || c == '\n' || number(pos)) && (letter(pos) || letter(pos + 1))) {
                    pos++;
                    while (letter(pos)) {
                        pos++;
                    }
                    pos = emit(pos);
                    continue;
                }
                if (number(pos)) {
                    int groupStart = pos;
                    while (number(pos)) {
                        pos++;
                        if (pos - groupStart >= 3) {
                            emit(pos);
                            groupStart = pos;
                        }
                    }
                    pos = emit(pos);
                    continue;
                }
                int probe = c == ' ' ? pos + 1 : pos;
                // a lone trailing space also lands here (probe is past the end): it becomes its own word either way
                if (other(probe) || (c == ' ' && !present(probe))) {
                    pos = probe;
                    while (other(pos)) {
                        pos++;
                    }
                    while (cp(pos) == '\r' || cp(pos) == '\n') {
                        pos++;
                    }
                    pos = emit(pos);
                    continue;
                }
                pos = whitespace(pos, true);
            }
        }

        /** {@code \s*[\r\n]+} (Llama 3 only), then {@code \s+(?!\S)}, then {@code \s+}, else one character. */
        private int whitespace(int pos, boolean newlineRule) {
            int count = 0;
            int afterLastNewline = -1;
            while (space(pos + count)) {
                int c = cp(pos + count);
                if (c == '\r' || c == '\n') {
                    afterLastNewline = pos + count + 1;
                }
                count++;
            }
            if (newlineRule && afterLastNewline >= 0) {
                return emit(afterLastNewline);
            }
            if (count > 1 && present(pos + count)) {
                return emit(pos + count - 1);
            }
            if (count > 0) {
                return emit(pos + count);
            }
            return emit(pos + 1);
        }
    }
}
