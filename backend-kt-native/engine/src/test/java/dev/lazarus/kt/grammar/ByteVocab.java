package dev.lazarus.kt.grammar;

import dev.lazarus.kt.tokenizer.TokenType;
import dev.lazarus.kt.tokenizer.Tokenizer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.OptionalInt;

/** A vocabulary of given byte strings, the last token the end of generation (test helper; also the grammar bench's). */
public final class ByteVocab implements Tokenizer {

    private final List<byte[]> tokens;

    public ByteVocab(List<byte[]> tokens) {
        this.tokens = tokens;
    }

    public static ByteVocab of(Object... pieces) {
        return new ByteVocab(java.util.Arrays.stream(pieces)
                .map(p -> p instanceof byte[] b ? b : ((String) p).getBytes(StandardCharsets.UTF_8)).toList());
    }

    @Override
    public int[] encode(String text, boolean addSpecial, boolean parseSpecial) {
        throw new UnsupportedOperationException();
    }

    @Override
    public String decode(int[] ids, boolean renderSpecial) {
        throw new UnsupportedOperationException();
    }

    @Override
    public byte[] tokenBytes(int id, boolean renderSpecial) {
        return tokens.get(id);
    }

    @Override
    public String piece(int id) {
        return new String(tokens.get(id), StandardCharsets.UTF_8);
    }

    @Override
    public OptionalInt tokenId(String piece) {
        return OptionalInt.empty();
    }

    @Override
    public TokenType tokenType(int id) {
        return TokenType.NORMAL;
    }

    @Override
    public int vocabSize() {
        return tokens.size();
    }

    @Override
    public int bos() {
        return -1;
    }

    @Override
    public int eos() {
        return tokens.size() - 1;
    }

    @Override
    public boolean addsBos() {
        return false;
    }

    @Override
    public boolean isEog(int id) {
        return id == tokens.size() - 1;
    }
}
