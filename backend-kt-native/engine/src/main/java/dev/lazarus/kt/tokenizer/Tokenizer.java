package dev.lazarus.kt.tokenizer;

import java.util.OptionalInt;

/**
 * Text ↔ token ids for one model's vocabulary, behaving like llama.cpp's tokenizer for the same
 * GGUF (same ids for the same text). Implementations are immutable and thread-safe.
 */
public interface Tokenizer {

    /**
     * Token ids of a text.
     *
     * @param addSpecial   add BOS (and EOS) as the vocabulary's {@code add_bos_token}/{@code add_eos_token} say
     * @param parseSpecial recognise control tokens written in the text (e.g. {@code <|im_start|>}) as
     *                     single tokens; user-defined tokens are recognised either way, like llama.cpp
     */
    int[] encode(String text, boolean addSpecial, boolean parseSpecial);

    /** The text of generated tokens: control tokens render as nothing (llama-server's default). */
    default String decode(int[] ids) {
        return decode(ids, false);
    }

    /** The text of tokens, with control tokens rendered as their text when {@code renderSpecial}. */
    String decode(int[] ids, boolean renderSpecial);

    /** The bytes a token stands for, control tokens included (may be part of a UTF-8 character). */
    default byte[] tokenBytes(int id) {
        return tokenBytes(id, true);
    }

    /** The bytes a token stands for; empty for control tokens unless {@code renderSpecial}. */
    byte[] tokenBytes(int id, boolean renderSpecial);

    /** The token's text as the vocabulary spells it (e.g. {@code "Ġhello"}, {@code "▁hello"}, {@code "<0x0A>"}). */
    String piece(int id);

    OptionalInt tokenId(String piece);

    TokenType tokenType(int id);

    int vocabSize();

    /** Beginning-of-sequence id, or -1 when the vocabulary has none. */
    int bos();

    /** End-of-sequence id, or -1 when the vocabulary has none. */
    int eos();

    /** Whether encoding with {@code addSpecial} puts BOS first. */
    boolean addsBos();

    /** Whether the token ends generation (EOS, EOT and the end-of-turn tokens llama.cpp recognises). */
    boolean isEog(int id);
}
