package dev.lazarus.gateway.resilience;

import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.GeneratedTokens;
import dev.lazarus.gateway.routing.Attempt;
import dev.lazarus.gateway.routing.BackendCallDecorator;
import java.util.function.Function;
import reactor.core.publisher.Flux;

/**
 * Keeps the {@link Transcript} of each backend call of models in {@code resume} mode and, when the
 * call fails after relaying something, hands it to the resumer inside the failure
 * ({@link InterruptedStreamException}). The call's subscriber context holds the transcript's
 * {@link GeneratedTokens}, which a backend fills with the answer's token ids where it can tell them.
 * Models in {@code error} mode pay nothing.
 */
public final class TranscriptDecorator implements BackendCallDecorator {

    private final Function<String, MidStreamMode> modes;

    public TranscriptDecorator(Function<String, MidStreamMode> modes) {
        this.modes = modes;
    }

    @Override
    public <T> Flux<T> decorate(Attempt<T> attempt, Flux<T> call) {
        if (modes.apply(attempt.model()) != MidStreamMode.RESUME) {
            return call;
        }
        ChunkInspector<T> inspector = ChunkInspector.of(attempt.endpoint());
        return Flux.defer(() -> {
            Transcript transcript = new Transcript();
            boolean[] relayed = {false};
            return call.doOnNext(chunk -> {
                        relayed[0] = true;
                        transcript.add(chunk, inspector);
                    })
                    .onErrorMap(error -> relayed[0], error -> new InterruptedStreamException(asBackend(error),
                            transcript))
                    // A backend that can tell its token ids records them here (token-exact resume).
                    .contextWrite(context -> context.put(GeneratedTokens.class, transcript.generatedTokens()));
        });
    }

    private static BackendException asBackend(Throwable error) {
        return error instanceof BackendException be ? be
                : new BackendException(BackendErrorKind.INTERNAL, String.valueOf(error.getMessage()), error);
    }
}
