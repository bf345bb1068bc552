package dev.lazarus.gateway.resilience;

import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.gateway.routing.Endpoint;
import dev.lazarus.gateway.routing.ReplaySeed;
import dev.lazarus.gateway.routing.RouteTarget;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import reactor.core.publisher.Flux;
import reactor.core.publisher.SynchronousSink;

/**
 * Token-exact resume of an answer whose server told no token ids (a Messages or Responses stream passed through
 * natively), where the answer is one the model gives again: greedy, or sampled from a seed (the client's, or the one
 * the router gave a Responses stream). The same request, translated onto chat, is made again from its start on a
 * backend of the same model (the same {@link dev.lazarus.backend.api.InferenceBackend#tokenIdentity token identity}),
 * so the replay's text begins with the text the client already has; that beginning is held back, compared and
 * dropped, and the rest goes on to the client: the answer an uncut run gives, token for token. A continuation from the
 * text instead re-tokenises it, which need not give the tokens the model generated. A replay that does not begin with
 * the text so far (another build's numerics, a server that ignored the seed) ends with {@link Diverged} before anything
 * of it reached the client, and the caller continues from the text after all.
 */
final class ExactReplay {

    private ExactReplay() {}

    /** A replay that did not begin with the text the client has. */
    static final class Diverged extends RuntimeException {
        Diverged(String why) {
            super(why, null, false, false);
        }
    }

    /**
     * The backends of {@code remaining} that would replay {@code request} as the {@code failed} one generated it: none
     * unless the request decodes greedily or from a seed, one answer, and the failed backend knows its model's token
     * identity.
     */
    static List<RouteTarget> plan(ChatCompletionRequest request, RouteTarget failed, List<RouteTarget> remaining,
            Endpoint<?, ?> endpoint) {
        Optional<String> identity = failed.backend().tokenIdentity();
        boolean greedy = request.temperature() != null && request.temperature() == 0.0;
        boolean again = (greedy || ReplaySeed.seeded(request)) && (request.n() == null || request.n() == 1);
        if (!again || identity.isEmpty()) {
            return List.of();
        }
        List<RouteTarget> plan = new ArrayList<>();
        for (RouteTarget target : remaining) {
            if (identity.equals(target.backend().tokenIdentity())
                    && endpoint.supports(target.backend().describe().capabilities())) {
                plan.add(target);
            }
        }
        return plan;
    }

    /** {@code replay} less its first {@code prefix.length()} characters, which must be {@code prefix}. */
    static Flux<ChatCompletionChunk> after(Flux<ChatCompletionChunk> replay, String prefix) {
        return Flux.defer(() -> {
            StringBuilder held = new StringBuilder();
            boolean[] through = {false};
            return replay.handle((ChatCompletionChunk chunk, SynchronousSink<ChatCompletionChunk> sink) -> {
                if (through[0]) {
                    sink.next(chunk);
                    return;
                }
                if (structured(chunk)) {
                    sink.error(new Diverged("the replay streamed tool calls or reasoning"));
                    return;
                }
                int from = held.length();
                held.append(chunk.contentDelta());
                int compared = Math.min(held.length(), prefix.length());
                for (int i = from; i < compared; i++) {
                    if (held.charAt(i) != prefix.charAt(i)) {
                        sink.error(new Diverged("the replay's text differs at character " + i));
                        return;
                    }
                }
                if (held.length() < prefix.length()) {
                    if (chunk.usage() != null || finished(chunk)) {
                        sink.error(new Diverged("the replay ended before the text so far"));
                    }
                    return;
                }
                through[0] = true;
                String rest = held.substring(prefix.length());
                if (!rest.isEmpty() || chunk.usage() != null || finished(chunk)) {
                    sink.next(withContent(chunk, rest));
                }
            });
        });
    }

    private static boolean structured(ChatCompletionChunk chunk) {
        return chunk.choices() != null && chunk.choices().stream().anyMatch(c -> c.delta() != null
                && (c.delta().toolCalls() != null || c.delta().reasoningContent() != null
                && !c.delta().reasoningContent().isEmpty()));
    }

    private static boolean finished(ChatCompletionChunk chunk) {
        return chunk.choices() != null && chunk.choices().stream().anyMatch(c -> c.finishReason() != null);
    }

    /** {@code chunk} adding {@code text} to choice 0 instead of what it added, no role. */
    private static ChatCompletionChunk withContent(ChatCompletionChunk chunk, String text) {
        String finish = chunk.choices() == null || chunk.choices().isEmpty() ? null : chunk.choices().getFirst().finishReason();
        List<ChatCompletionChunk.Choice> choices = text.isEmpty() && finish == null ? List.of()
                : List.of(new ChatCompletionChunk.Choice(0, ChatCompletionChunk.Delta.content(text), null, finish));
        return chunk.withChoices(choices);
    }
}
