package dev.lazarus.kt.chat;

import dev.lazarus.backend.api.openai.Tool;
import java.util.List;

/**
 * How one model family writes tool calls in its answer: a block that begins with {@link #open()}, ends
 * where {@link #bodyEnd} says, and holds one or more calls. {@link ToolCallParser} finds the blocks in
 * the streaming text; a syntax only knows its own block.
 */
public interface ToolCallSyntax {

    /** The text that begins a block. */
    String open();

    /** The marker texts of this syntax: a vocabulary's control tokens with these texts are written out, as llama-server does. */
    List<String> markers();

    /**
     * Where the block's body ends in the text after {@link #open()}, or -1 while it is not complete;
     * {@link #closeLength()} characters after that belong to the block too (its close tag).
     */
    int bodyEnd(CharSequence afterOpen);

    int closeLength();

    /**
     * Text written before a block that belongs to the block, not to the text before it (DSML's blank line, which
     * llama-server's parser leaves out of the content); "" for none.
     */
    default String separator() {
        return "";
    }

    /**
     * Whether text after the calls is the answer's (most formats) or dropped (formats whose llama-server parser ends
     * the answer with its calls).
     */
    default boolean keepsTextAfterCalls() {
        return true;
    }

    /**
     * The calls a block's body holds, or null when it is not a valid block (it then stays text).
     *
     * @param tools the request's tools, for the parameter types of formats that write arguments as text
     */
    List<AnswerPiece.Call> parse(String body, List<Tool> tools);

    /** A block from {@link #open()} to the first {@link #close()} after it (Hermes, GLM, DeepSeek). */
    interface Tagged extends ToolCallSyntax {

        /** The text that ends a block. */
        String close();

        @Override
        default int bodyEnd(CharSequence afterOpen) {
            return afterOpen instanceof StringBuilder sb ? sb.indexOf(close()) : afterOpen.toString().indexOf(close());
        }

        @Override
        default int closeLength() {
            return close().length();
        }
    }
}
