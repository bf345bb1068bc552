package dev.lazarus.llamacpp;

import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether this llama-server continues a trailing assistant message (what mid-stream resume needs),
 * from the {@code assistant-prefill} setting: {@code true}, {@code false}, or {@code auto}, which
 * claims it until the server first refuses a request ending in an assistant message with a 400 about
 * prefill (llama-server does for chat templates with thinking, other servers for their own reasons),
 * and from then on reports it unsupported.
 */
final class AssistantPrefill {

    enum Mode { AUTO, TRUE, FALSE }

    private static final Logger log = LoggerFactory.getLogger(AssistantPrefill.class);

    private final String backendId;
    private final Mode mode;
    private final AtomicBoolean refused = new AtomicBoolean();

    AssistantPrefill(String backendId, Mode mode) {
        this.backendId = backendId;
        this.mode = mode;
    }

    boolean supported() {
        return switch (mode) {
            case TRUE -> true;
            case FALSE -> false;
            case AUTO -> !refused.get();
        };
    }

    /** Learns from {@code error}, the answer to {@code request}, when it is a refused prefill. */
    void observe(ChatCompletionRequest request, Throwable error) {
        if (mode == Mode.AUTO && endsWithAssistant(request.messages()) && isPrefillRefusal(error)
                && refused.compareAndSet(false, true)) {
            log.warn("backend '{}' refused an assistant prefill ({}); it is no longer asked to continue answers",
                    backendId, error.getMessage());
        }
    }

    static boolean isPrefillRefusal(Throwable error) {
        return error instanceof BackendException e && e.kind() == BackendErrorKind.INVALID_REQUEST
                && e.getMessage() != null && e.getMessage().toLowerCase(Locale.ROOT).contains("prefill");
    }

    private static boolean endsWithAssistant(List<ChatMessage> messages) {
        return !messages.isEmpty() && "assistant".equals(messages.getLast().role());
    }
}
