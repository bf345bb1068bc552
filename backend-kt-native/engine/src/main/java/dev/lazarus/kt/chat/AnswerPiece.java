package dev.lazarus.kt.chat;

/** What a piece of an assistant's generated text turned out to be, once the chat format has parsed it. */
public sealed interface AnswerPiece {

    /** Plain text, for the message content. */
    record Text(String text) implements AnswerPiece {}

    /** Thinking, for {@code reasoning_content}. */
    record Reasoning(String text) implements AnswerPiece {}

    /** A call: the function's name and its arguments as a JSON string (OpenAI's wire form). */
    record Call(String name, String arguments) implements AnswerPiece {}
}
