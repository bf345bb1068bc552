package dev.lazarus.backend.api;

/**
 * A prompt that does not fit a backend's context, told as llama-server tells it: its error type
 * {@code exceed_context_size_error} with the prompt's token count and the context size, and OpenAI's code
 * {@code context_length_exceeded}, which OpenAI's clients look for.
 */
public class ContextLengthExceededException extends BackendException {

    public static final String TYPE = "exceed_context_size_error";

    private final int promptTokens;
    private final int contextSize;

    /**
     * @param param the request parameter that holds the prompt ({@code messages}, {@code prompt}), or null
     *              when the caller does not know it yet ({@link #withParam})
     */
    public ContextLengthExceededException(int promptTokens, int contextSize, String param) {
        this("request (" + promptTokens + " tokens) exceeds the available context size (" + contextSize
                + " tokens), try increasing it", promptTokens, contextSize, param);
    }

    /** With the words an upstream llama-server sent (redacted by the caller). */
    public ContextLengthExceededException(String message, int promptTokens, int contextSize, String param) {
        this(message, promptTokens, contextSize, param, null);
    }

    private ContextLengthExceededException(String message, int promptTokens, int contextSize, String param,
            Throwable cause) {
        super(BackendErrorKind.CONTEXT_LENGTH_EXCEEDED, message, param, null, TYPE,
                BackendErrorKind.CONTEXT_LENGTH_EXCEEDED.code(), cause);
        this.promptTokens = promptTokens;
        this.contextSize = contextSize;
    }

    /** The same error naming {@code param} as the parameter at fault. */
    public ContextLengthExceededException withParam(String param) {
        return new ContextLengthExceededException(getMessage(), promptTokens, contextSize, param, getCause());
    }

    @Override
    public ContextLengthExceededException withMessage(String message, Throwable cause) {
        return new ContextLengthExceededException(message, promptTokens, contextSize, param(), cause);
    }

    /** llama-server's {@code n_prompt_tokens}. */
    public int promptTokens() {
        return promptTokens;
    }

    /** llama-server's {@code n_ctx}: the positions one request may fill, prompt and completion together. */
    public int contextSize() {
        return contextSize;
    }
}
