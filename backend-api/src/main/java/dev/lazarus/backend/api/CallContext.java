package dev.lazarus.backend.api;

import java.util.Optional;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

/**
 * The parameters of a backend call that travel in its Reactor subscriber context rather than in its
 * request, named in one place: what a caller may put there and what a backend reads. A backend that
 * ignores them still serves the call correctly.
 * <ul>
 *   <li>{@link #GENERATED_TOKENS}: a {@link GeneratedTokens} the backend fills with the answer's token ids
 *       ({@code chat} calls of a backend with a {@link InferenceBackend#tokenIdentity token identity}).</li>
 *   <li>{@link #TOKEN_PREFIX}: a {@link TokenPrefix}, the exact tokens of an interrupted answer that this
 *       {@code chat} call continues.</li>
 *   <li>{@link #PREFILL_PROGRESS}: a {@link PrefillProgress} the backend tells while its server reads the
 *       prompt of a streamed call (any endpoint), before the first token.</li>
 * </ul>
 */
public final class CallContext {

    public static final Class<GeneratedTokens> GENERATED_TOKENS = GeneratedTokens.class;
    public static final Class<TokenPrefix> TOKEN_PREFIX = TokenPrefix.class;
    public static final Class<PrefillProgress> PREFILL_PROGRESS = PrefillProgress.class;

    private CallContext() {}

    public static Optional<GeneratedTokens> generatedTokens(ContextView context) {
        return context.getOrEmpty(GENERATED_TOKENS);
    }

    public static Optional<TokenPrefix> tokenPrefix(ContextView context) {
        return context.getOrEmpty(TOKEN_PREFIX);
    }

    public static Optional<PrefillProgress> prefillProgress(ContextView context) {
        return context.getOrEmpty(PREFILL_PROGRESS);
    }

    public static Context withPrefillProgress(Context context, PrefillProgress progress) {
        return context.put(PREFILL_PROGRESS, progress);
    }

    public static Context withGeneratedTokens(Context context, GeneratedTokens tokens) {
        return context.put(GENERATED_TOKENS, tokens);
    }

    /** The context with {@code prefix}, or without any prefix an outer call put there when empty. */
    public static Context withTokenPrefix(Context context, Optional<TokenPrefix> prefix) {
        return prefix.isPresent() ? context.put(TOKEN_PREFIX, prefix.get()) : context.delete(TOKEN_PREFIX);
    }

    /** Whether the caller asks for anything through the context (a backend then takes its typed path). */
    public static boolean asksForTokens(ContextView context) {
        return context.hasKey(GENERATED_TOKENS) || context.hasKey(TOKEN_PREFIX);
    }
}
