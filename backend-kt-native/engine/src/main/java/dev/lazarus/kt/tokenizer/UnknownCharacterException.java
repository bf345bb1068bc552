package dev.lazarus.kt.tokenizer;

/**
 * Text holding a character that a vocabulary without byte-fallback tokens cannot spell. llama.cpp refuses such text
 * (its SentencePiece tokenizer finds no {@code <0xNN>} piece and fails), so the engine refuses it too rather than
 * answering about {@code <unk>} tokens the user never sees.
 */
public final class UnknownCharacterException extends IllegalArgumentException {

    UnknownCharacterException(int codePoint) {
        super(String.format("the text holds a character this model's vocabulary cannot spell: U+%04X '%s' (the"
                + " vocabulary has no piece for it and no byte-fallback pieces)", codePoint, Character.toString(codePoint)));
    }
}
