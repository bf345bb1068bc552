package dev.lazarus.gateway.resilience;

import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.CallContext;
import dev.lazarus.backend.api.GeneratedTokens;
import dev.lazarus.gateway.routing.Attempt;
import dev.lazarus.gateway.routing.BackendCallDecorator;
import dev.lazarus.gateway.routing.CallLayer;
import dev.lazarus.gateway.routing.MidStreamMode;
import dev.lazarus.gateway.routing.CallKind;
import dev.lazarus.gateway.routing.ProtocolContinuation;
import dev.lazarus.gateway.routing.RouteTarget;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.util.context.ContextView;

/**
 * Keeps the {@link Transcript} of each backend call of models in {@code resume} mode and, when the
 * call fails after relaying something, hands it to the resumer inside the failure
 * ({@link InterruptedStreamException}). Where a later backend of the plan serves the same model
 * ({@link dev.lazarus.backend.api.InferenceBackend#tokenIdentity()}), the call's subscriber context
 * holds the transcript's {@link GeneratedTokens}, which the backend fills with the answer's token ids.
 * Models in {@code error} mode pay nothing, and where no backend is left to resume on, the relayed text is not kept.
 */
public final class TranscriptDecorator implements BackendCallDecorator {

    private final Function<String, MidStreamMode> modes;

    public TranscriptDecorator(Function<String, MidStreamMode> modes) {
        this.modes = modes;
    }

    @Override
    public CallLayer layer() {
        return CallLayer.TRANSCRIPT;
    }

    @Override
    public <T> Flux<T> decorate(Attempt<T> attempt, Flux<T> call) {
        // A whole answer is never resumed: a failed call is made again on the next backend.
        if (modes.apply(attempt.model()) != MidStreamMode.RESUME || attempt.endpoint().whole()) {
            return call;
        }
        ChunkInspector<T> inspector = ChunkInspector.of(attempt.endpoint());
        boolean recordIds = sameModelBehind(attempt);
        return Flux.deferContextual(context -> {
            Transcript transcript = new Transcript(!resumeTargets(attempt, context).isEmpty());
            boolean[] relayed = {false};
            Flux<T> recorded = call.doOnNext(chunk -> {
                        relayed[0] = true;
                        transcript.add(chunk, inspector);
                    })
                    .onErrorMap(error -> relayed[0], error -> new InterruptedStreamException(asBackend(error),
                            transcript));
            // The backend records the answer's token ids here (token-exact resume), which costs it a little
            // per token: only where a later backend of the plan serves the same model and could use them.
            return recordIds ? recorded.contextWrite(c -> CallContext.withGeneratedTokens(c,
                    transcript.generatedTokens())) : recorded;
        });
    }

    /**
     * The backends a cut answer could go on on: those after this one in the plan, or for a natively served protocol
     * stream (planned as its route's last candidate) those after it in its {@link ProtocolContinuation}.
     */
    private static List<RouteTarget> resumeTargets(Attempt<?> attempt, ContextView context) {
        if (attempt.endpoint().kind() != CallKind.PROTOCOL_EVENTS) {
            return attempt.after();
        }
        ProtocolContinuation cut = ProtocolContinuation.in(context);
        return cut == null ? List.of() : cut.after(attempt.target());
    }

    private static boolean sameModelBehind(Attempt<?> attempt) {
        // Backends record and continue from token ids on typed chat streams only; events are planned only
        // for a route's last candidate, which has no backend behind it.
        boolean typedChat = switch (attempt.endpoint().kind()) {
            case CHAT -> true;
            case CHAT_EVENTS, PROTOCOL_EVENTS, COMPLETION, WHOLE, JSON -> false;
        };
        if (!typedChat) {
            return false;
        }
        Optional<String> identity = attempt.target().backend().tokenIdentity();
        return identity.isPresent() && attempt.after().stream()
                .anyMatch(next -> next.backend().tokenIdentity().equals(identity));
    }

    private static BackendException asBackend(Throwable error) {
        return error instanceof BackendException be ? be
                : new BackendException(BackendErrorKind.INTERNAL, String.valueOf(error.getMessage()), error);
    }
}
