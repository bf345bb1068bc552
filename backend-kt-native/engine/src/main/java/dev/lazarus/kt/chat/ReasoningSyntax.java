package dev.lazarus.kt.chat;

/**
 * How a thinking model's answer opens with its reasoning: a {@code <think>...</think>} block whose text
 * goes to {@code reasoning_content}, as llama-server's default {@code --reasoning-format} (auto, i.e.
 * deepseek) splits it. The layout around the tags is the template's own: llama-server learns it by
 * rendering a reasoning turn, and so does {@link ChatFormat}; Qwen3 renders
 * {@code <think>\nR\n</think>\n\nC}, so up to one newline after the open tag and two after the close tag
 * are layout, not text; GLM-4.5 renders {@code <think>R</think>\nC} (one after the close tag); templates
 * that never render reasoning (DeepSeek-R1) keep every character.
 *
 * Qwen3.5's format is read by a parser of llama-server's own instead ({@link XmlCalls#REASONING}): all whitespace
 * after either tag is layout, and a call's open tag ends the block too.
 *
 * @param newlinesAfterOpen  newlines after {@code <think>} that are layout (dropped); {@link #ANY_WHITESPACE} for all
 *                           the whitespace there
 * @param newlinesAfterClose newlines after {@code </think>} that are layout (dropped), or {@link #ANY_WHITESPACE}
 * @param endsAtCall         a text that also ends the block and begins the answer after it (a call's open tag), or
 *                           null
 */
public record ReasoningSyntax(int newlinesAfterOpen, int newlinesAfterClose, String endsAtCall) {

    public static final String OPEN = "<think>";
    public static final String CLOSE = "</think>";
    /** Layout of whatever whitespace follows the tag. */
    public static final int ANY_WHITESPACE = Integer.MAX_VALUE;

    /** A block that only its close tag ends. */
    public ReasoningSyntax(int newlinesAfterOpen, int newlinesAfterClose) {
        this(newlinesAfterOpen, newlinesAfterClose, null);
    }

    /** Where the generation starts, as the rendered prompt leaves it. */
    public enum Start {
        /** The answer may open with a reasoning block. */
        BEFORE,
        /** The prompt opened the block ({@code <think>\n} in DeepSeek-R1's generation prompt): the answer starts inside it. */
        INSIDE,
        /** The prompt holds an empty, closed block ({@code enable_thinking: false}): the answer is not split. */
        CLOSED
    }

    /** Where generation after {@code prompt} starts, and what of the prompt already belongs to the reasoning. */
    public record PromptState(Start start, String carried) {}

    /**
     * The state a rendered prompt leaves: it ends with an open tag (and layout after it: llama-server counts
     * that as reasoning already written, e.g. R1's {@code "\n"}), or with a close tag, or with neither.
     */
    public static PromptState stateAfter(String prompt) {
        String trimmed = prompt.stripTrailing();
        if (trimmed.endsWith(OPEN)) {
            return new PromptState(Start.INSIDE, prompt.substring(trimmed.length()));
        }
        if (trimmed.endsWith(CLOSE)) {
            return new PromptState(Start.CLOSED, "");
        }
        return new PromptState(Start.BEFORE, "");
    }
}
