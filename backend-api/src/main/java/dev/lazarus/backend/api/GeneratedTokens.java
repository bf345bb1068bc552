package dev.lazarus.backend.api;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The token ids of one answer as a backend generates them, for a caller that may have to continue
 * that answer elsewhere ({@link TokenPrefix}). The caller puts one in the subscriber context of a
 * {@code chat} call (Reactor's {@code contextWrite}, key {@link CallContext#GENERATED_TOKENS}); a backend
 * that can tell its token ids {@linkplain #start starts} it and {@linkplain #add adds} them as it
 * streams; any other backend leaves it empty, and the caller falls back to the answer's text.
 * One call's chunks arrive one after the other, so it needs no locking beyond visibility.
 */
public final class GeneratedTokens {

    private final List<Integer> ids = new ArrayList<>();
    private volatile String modelIdentity;

    /**
     * A new answer of the model named {@code modelIdentity} ({@link TokenPrefix#modelIdentity()}),
     * which begins with {@code prefix} (an earlier backend's ids that this one continues; empty for
     * an answer from its first token). Forgets whatever an earlier try of the same call recorded.
     */
    public synchronized void start(String modelIdentity, List<Integer> prefix) {
        ids.clear();
        ids.addAll(prefix);
        this.modelIdentity = modelIdentity;
    }

    public synchronized void add(int id) {
        if (modelIdentity != null) {
            ids.add(id);
        }
    }

    /** The ids can no longer be trusted to spell the answer (a chunk came without them). */
    public synchronized void lost() {
        modelIdentity = null;
        ids.clear();
    }

    /** The answer so far as token ids, when a backend recorded it from its first token on. */
    public synchronized Optional<TokenPrefix> prefix() {
        return modelIdentity == null || ids.isEmpty() ? Optional.empty()
                : Optional.of(new TokenPrefix(modelIdentity, List.copyOf(ids)));
    }
}
