package dev.lazarus.gateway.routing;

import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import java.util.List;
import java.util.function.BiFunction;
import reactor.core.publisher.Flux;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

/**
 * How a natively served protocol stream (Messages, Responses) cut mid-answer goes on: the client's request
 * translated onto chat completions, continued on the backends of the plan after the one that failed, through the
 * attempt loop of a resumed stream. {@link Router#protocol} puts it in the native stream's subscriber context, where
 * the {@link StreamResumer} finds it: a backend's own protocol server cannot be told to go on from text, its chat
 * completions can.
 *
 * @param chat the request translated onto chat completions
 * @param plan the route's plan, native backends and translating ones, in order
 * @param run  sends a continuation of {@code chat} along a plan (a resumed stream's run)
 */
public record ProtocolContinuation(ChatCompletionRequest chat, List<RouteTarget> plan,
        BiFunction<List<RouteTarget>, ChatCompletionRequest, Flux<ChatCompletionChunk>> run) {

    /** The backends after {@code failed} in the plan. */
    public List<RouteTarget> after(RouteTarget failed) {
        for (int i = 0; i < plan.size(); i++) {
            if (plan.get(i).backendId().equals(failed.backendId())) {
                return plan.subList(i + 1, plan.size());
            }
        }
        return List.of();
    }

    Context into(Context context) {
        return context.put(ProtocolContinuation.class, this);
    }

    /** The continuation {@link Router#protocol} put in {@code context}, or null. */
    public static ProtocolContinuation in(ContextView context) {
        return context.getOrDefault(ProtocolContinuation.class, null);
    }
}
