package dev.lazarus.gateway.resilience;

import dev.lazarus.backend.api.BackendCapabilities;
import dev.lazarus.backend.api.CallContext;
import dev.lazarus.backend.api.TokenPrefix;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.Usage;
import dev.lazarus.gateway.routing.CallKind;
import dev.lazarus.gateway.routing.Endpoint;
import dev.lazarus.gateway.routing.MidStreamFailure;
import dev.lazarus.gateway.routing.MidStreamMode;
import dev.lazarus.gateway.routing.ProtocolContinuation;
import dev.lazarus.gateway.routing.ProtocolPiece;
import dev.lazarus.gateway.routing.RouteTarget;
import dev.lazarus.gateway.routing.RoutingListener;
import dev.lazarus.gateway.routing.StreamResumer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.SynchronousSink;

/**
 * Mid-stream failover: when the backend serving a stream fails after its first token, the same
 * request goes to the next backend of the remaining plan that can continue it, with the text
 * generated so far as the start of the answer ({@link Continuation}) and, where the interrupted
 * backend told them, the answer's token ids ({@link TokenPrefix}, in the continuation's context: a
 * backend of the same model continues from those exactly), and its chunks are spliced
 * into the client's stream: no second role announcement, usage of the whole answer (the original
 * prompt and every completion token). The response's id, creation time and model are the gateway's
 * own, set downstream, so the client sees one answer. A further failure of the continuation is
 * resumed the same way. A natively served Messages or Responses stream goes on as its request translated onto
 * chat completions ({@link ProtocolContinuation}), on the backends after the one that failed: a greedy or seeded one
 * replayed from its start on a backend of the same model, token-exact ({@link ExactReplay}), any other from its text. A remaining backend that fails before its first chunk, or refuses the prefix
 * with a 400 (a chat template without prefill), hands on to the next. When the client has received
 * no text yet, the request goes on unchanged: the answer starts again on the next backend. Not
 * resumed (an error event naming the original failure ends the stream instead): models in
 * {@code error} mode, answers that were streaming tool calls or reasoning (natively or not), requests that cannot take
 * a text prefix, and when no remaining backend can continue.
 */
public final class ResumingStreamResumer implements StreamResumer {

    private static final Logger log = LoggerFactory.getLogger(ResumingStreamResumer.class);

    private final Function<String, MidStreamMode> modes;
    private final RoutingListener listener;

    public ResumingStreamResumer(Function<String, MidStreamMode> modes, RoutingListener listener) {
        this.modes = modes;
        this.listener = listener;
    }

    @Override
    public <R, T> Flux<T> resume(MidStreamFailure<R, T> failure) {
        if (modes.apply(failure.model()) != MidStreamMode.RESUME) {
            return refuse(failure, "the model's mid-stream mode is error");
        }
        if (!(failure.cause() instanceof InterruptedStreamException interrupted)) {
            return refuse(failure, "nothing recorded of the interrupted answer");
        }
        Transcript transcript = interrupted.transcript();
        if (transcript.structured()) {
            return refuse(failure, "the answer was streaming tool calls or reasoning");
        }
        if (failure.endpoint().kind() == CallKind.PROTOCOL_EVENTS) {
            // A protocol server cannot be told to go on from text; the same request translated onto chat can.
            return Flux.deferContextual(context -> {
                ProtocolContinuation cut = ProtocolContinuation.in(context);
                if (cut == null) {
                    return refuse(failure, "the answer was passed through natively");
                }
                List<RouteTarget> after = cut.after(failure.failed());
                Flux<ChatCompletionChunk> fromText = Flux.defer(() -> continueAfter(failure, transcript, Endpoint.CHAT,
                        cut.chat(), after, cut.run()));
                List<RouteTarget> replayers = transcript.text().isEmpty() ? List.of()
                        : ExactReplay.plan(cut.chat(), failure.failed(), after, Endpoint.CHAT);
                Flux<ChatCompletionChunk> chunks = replayers.isEmpty() ? fromText
                        : replay(failure, transcript, cut, replayers).onErrorResume(ExactReplay.Diverged.class, diverged -> {
                            log.warn("model '{}': the replay diverged ({}); continuing from the text",
                                    failure.model(), diverged.getMessage());
                            return fromText;
                        });
                @SuppressWarnings("unchecked") // the protocol's pieces: the native events, then these chunks
                Flux<T> pieces = (Flux<T>) chunks.map(ProtocolPiece.Chunk::new);
                return pieces;
            });
        }
        return continueAfter(failure, transcript, failure.endpoint(), failure.request(), failure.remaining(),
                failure::continueOn);
    }

    /**
     * A greedy or seeded native answer made again from its start on {@code plan}, backends of its model ({@link ExactReplay}):
     * its usage is the whole answer's as it is. A failure before anything of it went on is the original failure's.
     */
    private Flux<ChatCompletionChunk> replay(MidStreamFailure<?, ?> failure, Transcript transcript,
            ProtocolContinuation cut, List<RouteTarget> plan) {
        String from = failure.failed().backendId();
        log.warn("model '{}': backend '{}' failed after {} tokens ({}: {}); replaying the answer on '{}'",
                failure.model(), from, transcript.tokens(), failure.cause().kind(), failure.cause().getMessage(),
                plan.getFirst().backendId());
        listener.resumed(failure.model(), from, plan.getFirst().backendId(), failure.cause(), transcript.tokens());
        boolean[] relayed = {false};
        return ExactReplay.after(cut.run().apply(plan, cut.chat())
                        .contextWrite(context -> CallContext.withTokenPrefix(context, Optional.empty())),
                        transcript.text())
                .doOnNext(chunk -> relayed[0] = true)
                .onErrorResume(error -> !relayed[0] && !(error instanceof ExactReplay.Diverged),
                        error -> refuse(failure, "no remaining backend could replay the answer (" + error.getMessage() + ")"));
    }

    /** The answer of {@code request} continued after {@code transcript} on the first of {@code remaining} that can. */
    private <R, T> Flux<T> continueAfter(MidStreamFailure<?, ?> failure, Transcript transcript, Endpoint<R, T> endpoint,
            R request, List<RouteTarget> remaining, BiFunction<List<RouteTarget>, R, Flux<T>> run) {
        String from = failure.failed().backendId();
        Continuation<R, T> continuation = Continuation.of(endpoint);
        ChunkInspector<T> inspector = ChunkInspector.of(endpoint);
        Integer limit = continuation.maxTokens(request);
        if (limit != null && limit - transcript.tokens() <= 0) {
            // It failed between its last allowed token and its finish: only the end is missing.
            return Flux.fromIterable(continuation.endAtLimit(transcript.promptTokens(), transcript.tokens()));
        }
        // With no text relayed yet (a role announcement at most) the request goes on as it is: the
        // answer starts again, and needs no prefill unless the request itself ends in one.
        R next = transcript.text().isEmpty() ? request : continuation.after(request, transcript);
        if (next == null) {
            return refuse(failure, "the request cannot be continued from text");
        }
        boolean prefix = continuation.endsWithPrefix(next);
        List<RouteTarget> plan = remaining.stream()
                .filter(target -> canContinue(endpoint, prefix, target.backend().describe().capabilities()))
                .toList();
        if (plan.isEmpty()) {
            return refuse(failure, "no remaining backend can continue the answer");
        }
        log.warn("model '{}': backend '{}' failed after {} tokens ({}: {}); resuming on '{}'", failure.model(), from,
                transcript.tokens(), failure.cause().kind(), failure.cause().getMessage(), plan.getFirst().backendId());
        listener.resumed(failure.model(), from, plan.getFirst().backendId(), failure.cause(), transcript.tokens());
        int before = transcript.tokens();
        int originalPrompt = transcript.promptTokens();
        boolean[] relayed = {false};
        // Where the interrupted backend told the answer's token ids, a backend of the same model may go on
        // from them exactly; a continuation of a continuation never sees an older, shorter prefix.
        Optional<TokenPrefix> tokens = next == request ? Optional.empty() : transcript.tokenPrefix();
        return run.apply(plan, next)
                .contextWrite(context -> CallContext.withTokenPrefix(context, tokens))
                .handle((T chunk, SynchronousSink<T> sink) -> {
                    relayed[0] = true;
                    T withoutRole = inspector.withoutRole(chunk);
                    if (withoutRole == null) {
                        return;
                    }
                    Usage usage = inspector.usage(withoutRole);
                    sink.next(usage == null ? withoutRole : inspector.withUsage(withoutRole, merged(usage, before, originalPrompt)));
                })
                // Every remaining backend failed or refused the continuation (its 400 is logged by the
                // attempt loop): the client learns of the original failure, not of that 400.
                .onErrorResume(error -> !relayed[0],
                        error -> refuse(failure, "no remaining backend could continue the answer (" + error.getMessage() + ")"));
    }

    private static boolean canContinue(Endpoint<?, ?> endpoint, boolean prefix, BackendCapabilities capabilities) {
        return endpoint.supports(capabilities) && (!prefix || capabilities.assistantPrefill());
    }

    /**
     * The continuation's prompt held the original prompt plus the text so far; its completion is
     * only the rest. The client is owed the original prompt and the whole completion. The original
     * prompt's size is the interrupted backend's own count where it gave one ({@code originalPrompt},
     * from its usage or llama.cpp's per-token timings); else it is estimated as the continuation's
     * prompt less the tokens generated so far, which also counts the chat template's wrapping of the
     * trailing assistant message and any difference in how the text re-tokenises. The continuation's
     * usage details are kept, its {@code cached_tokens} at most the prompt reported.
     */
    static Usage merged(Usage continuation, int tokensBefore, int originalPrompt) {
        int prompt = originalPrompt >= 0 ? originalPrompt : Math.max(0, continuation.promptTokens() - tokensBefore);
        int completion = continuation.completionTokens() + tokensBefore;
        Map<String, Object> promptDetails = continuation.promptTokensDetails();
        if (promptDetails != null && promptDetails.get("cached_tokens") instanceof Number cached
                && cached.intValue() > prompt) {
            promptDetails = new LinkedHashMap<>(promptDetails);
            promptDetails.put("cached_tokens", prompt);
        }
        return new Usage(prompt, completion, prompt + completion, promptDetails, continuation.completionTokensDetails());
    }

    private <T> Flux<T> refuse(MidStreamFailure<?, ?> failure, String why) {
        log.warn("model '{}': backend '{}' failed mid-stream ({}: {}); not resumed: {}", failure.model(),
                failure.failed().backendId(), failure.cause().kind(), failure.cause().getMessage(), why);
        listener.notResumed(failure.model(), failure.failed().backendId(), failure.cause(), why);
        return Flux.error(failure.cause());
    }
}
