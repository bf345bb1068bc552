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
 * and the chunks lose the {@code logprobs} again before anyone else sees them. llama-server (b11669)
 * sends no id for a token whose text it holds back as incomplete UTF-8 (the next chunk carries the
 * text of both and the id of the last): each chunk's per-token {@code timings.predicted_n} counts
 * every token generated, so a gap shows, and the record is given up from there (the answer is then
 * continued from its text), never continued from ids that skip a token.
 */
final class TokenRecorder {

    private final GeneratedTokens record;
    private final boolean added;
    /** Ids recorded so far; -1 once the record was given up. */
    private int recorded;

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

    /**
     * Adds the ids of {@code choice}; false where they cannot be trusted to be all the tokens so far:
     * an entry without an id, text without entries, or fewer ids than the tokens the server counts.
     */
    private boolean record(ChatCompletionChunk.Choice choice, Map<String, Object> extra) {
        Logprobs logprobs = choice.logprobs();
        boolean text = choice.delta() != null && choice.delta().content() != null && !choice.delta().content().isEmpty();
        if (logprobs == null || logprobs.content() == null || logprobs.content().isEmpty()) {
            return !text;
        }
        for (Logprobs.TokenLogprob entry : logprobs.content()) {
            if (entry.id() == null) {
                return false;
            }
            record.add(entry.id());
            recorded++;
        }
        return extra != null && extra.get("timings") instanceof Map<?, ?> timings
                && timings.get("predicted_n") instanceof Number predicted && predicted.intValue() == recorded;
    }

    /** Records the chunk's token ids; returns it as the client asked for it. */
    ChatCompletionChunk observe(ChatCompletionChunk chunk) {
        List<ChatCompletionChunk.Choice> choices = chunk.choices();
        if (choices == null || choices.isEmpty()) {
            return chunk;
        }
        ChatCompletionChunk.Choice choice = choices.getFirst();
        if (recorded >= 0 && !record(choice, chunk.extra())) {
            record.lost(); // the record no longer spells the answer
            recorded = -1;
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
