package dev.lazarus.backend.api;

import java.util.List;
import java.util.Objects;

/**
 * An interrupted answer as the exact token ids its backend generated, offered to the backend that
 * continues it: a caller puts it in the subscriber context of the continuation's {@code chat} call
 * (key {@link CallContext#TOKEN_PREFIX}), whose request also carries the same answer as text (a trailing
 * assistant message). A backend serving the model named {@link #modelIdentity} may continue from
 * the ids themselves, so the answer goes on token for token as if it had never been cut; any other
 * backend continues from the text.
 *
 * @param modelIdentity names the model and tokenizer the ids belong to (equal across backends that
 *                      serve the same model file)
 * @param ids           the answer's tokens so far, in order
 */
public record TokenPrefix(String modelIdentity, List<Integer> ids) {

    public TokenPrefix {
        Objects.requireNonNull(modelIdentity, "modelIdentity");
        ids = List.copyOf(ids);
    }
}
