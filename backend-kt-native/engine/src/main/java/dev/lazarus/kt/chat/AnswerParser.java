package dev.lazarus.kt.chat;

import java.util.List;

/**
 * Parses an assistant's answer as it streams into text, reasoning and tool calls, in the shape
 * llama-server gives the same answer. Not thread-safe: one per generation.
 */
public interface AnswerParser {

    /** Takes the next piece of generated text; returns what can be decided now (possibly nothing). */
    List<AnswerPiece> push(String text);

    /** The generation ended: everything still held back. */
    List<AnswerPiece> finish();
}
