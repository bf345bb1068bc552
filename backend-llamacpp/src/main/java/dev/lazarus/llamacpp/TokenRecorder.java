package dev.lazarus.llamacpp;

import dev.lazarus.backend.api.GeneratedTokens;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.Logprobs;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Records the token ids a llama-server generates for one chat answer into the caller's
 * {@link GeneratedTokens}, so that the answer can be continued token for token if this server dies.
 * llama-server's chat stream names its tokens only in {@code logprobs} (each entry has an
 * {@code id}); where the client did not ask for them, the request asks for one probability per token
 * after sampling ({@code n_probs: 1, post_sampling_probs: true}: no sort of the whole vocabulary)
 * and the chunks lose the {@code logprobs} again before anyone else sees them.
 */
final class TokenRecorder {

    private final GeneratedTokens record;
    private final boolean added;

    private TokenRecorder(GeneratedTokens record, boolean added) {
        this.record = record;
        this.added = added;
    }

    /**
     * A recorder for {@code upstream} (whose extra fields it may add to), or null where the answer's
     * ids cannot be recorded from its first token: no record asked for, no identity known, or a
     * request ending in an assistant message (the answer began before this call).
     */
    static TokenRecorder attach(ChatCompletionRequest upstream, GeneratedTokens record, String identity) {
        if (record == null || identity == null) {
            return null;
        }
        if (!upstream.messages().isEmpty() && "assistant".equals(upstream.messages().getLast().role())) {
            record.lost();
            return null;
        }
        Map<String, Object> extra = upstream.extra();
        boolean clientAsked = Boolean.TRUE.equals(upstream.logprobs()) || extra.containsKey("n_probs");
        if (!clientAsked) {
            extra.put("n_probs", 1);
            extra.put("post_sampling_probs", true);
        }
        record.start(identity, List.of());
        return new TokenRecorder(record, !clientAsked);
    }

    /** Records the chunk's token ids; returns it as the client asked for it. */
    ChatCompletionChunk observe(ChatCompletionChunk chunk) {
        List<ChatCompletionChunk.Choice> choices = chunk.choices();
        if (choices == null || choices.isEmpty()) {
            return chunk;
        }
        ChatCompletionChunk.Choice choice = choices.getFirst();
        Logprobs logprobs = choice.logprobs();
        if (logprobs != null && logprobs.content() != null) {
            for (Logprobs.TokenLogprob entry : logprobs.content()) {
                if (entry.id() == null) {
                    record.lost();
                    break;
                }
                record.add(entry.id());
            }
        } else if (choice.delta() != null && choice.delta().content() != null && !choice.delta().content().isEmpty()) {
            record.lost(); // text without its ids: the record no longer spells the answer
        }
        if (!added) {
            return chunk;
        }
        List<ChatCompletionChunk.Choice> without = new ArrayList<>(choices.size());
        for (ChatCompletionChunk.Choice c : choices) {
            without.add(c.logprobs() == null ? c : new ChatCompletionChunk.Choice(c.index(), c.delta(), null, c.finishReason()));
        }
        return chunk.withChoices(without);
    }
}
