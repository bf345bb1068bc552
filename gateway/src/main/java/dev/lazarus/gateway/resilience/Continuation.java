package dev.lazarus.gateway.resilience;

import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatEvents;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.backend.api.openai.Completion;
import dev.lazarus.backend.api.openai.CompletionRequest;
import dev.lazarus.backend.api.openai.Usage;
import dev.lazarus.gateway.routing.Endpoint;
import java.util.ArrayList;
import java.util.List;

/**
 * How a request is continued after {@code n} tokens of text: chat puts the text as a trailing
 * assistant message (extending one that is already last, which a backend with
 * {@code assistantPrefill} continues); legacy completions append it to the prompt. Either way the
 * token limit shrinks by what was already generated.
 *
 * @param <R> request type
 * @param <T> chunk type
 */
interface Continuation<R, T> {

    /** The request that continues after {@code transcript}, or null when this one cannot be continued. */
    R after(R request, Transcript transcript);

    /** Whether {@code request} ends in text the backend must continue (a trailing assistant message). */
    boolean endsWithPrefix(R request);

    /** The request's token limit, or null when it has none. */
    Integer maxTokens(R request);

    /**
     * The end of an answer that had already reached its limit: a "length" finish, then usage
     * ({@code promptTokens} as the interrupted backend counted them; 0 where it did not say).
     */
    List<T> endAtLimit(int promptTokens, int tokens);

    static <R, T> Continuation<R, T> of(Endpoint<R, T> endpoint) {
        @SuppressWarnings("unchecked")
        Continuation<R, T> c = (Continuation<R, T>) switch (endpoint.kind()) {
            case CHAT -> CHAT;
            case CHAT_EVENTS -> CHAT_EVENTS;
            case COMPLETION -> COMPLETION;
            // Nothing of a whole answer reaches the client before its end: a failed call is made again elsewhere.
            case WHOLE, JSON -> throw new IllegalArgumentException("a whole answer is never continued");
            case PROTOCOL_EVENTS -> throw new IllegalArgumentException("a native stream goes on as chat (ProtocolContinuation)");
        };
        return c;
    }

    /** What is left of a limit; at least 1 (the resumer ends an answer whose budget is spent without a call). */
    private static Integer less(Integer limit, int used) {
        return limit == null ? null : Math.max(1, limit - used);
    }

    Continuation<ChatCompletionRequest, ChatCompletionChunk> CHAT = new Continuation<>() {
        @Override
        public ChatCompletionRequest after(ChatCompletionRequest request, Transcript transcript) {
            List<ChatMessage> messages = new ArrayList<>(request.messages());
            ChatMessage last = messages.isEmpty() ? null : messages.getLast();
            if (last != null && "assistant".equals(last.role()) && last.toolCalls() == null) {
                messages.set(messages.size() - 1, ChatMessage.assistant(last.text() + transcript.text()));
            } else {
                messages.add(ChatMessage.assistant(transcript.text()));
            }
            // Both limits carry what is left of the one in force: max_tokens with a larger max_completion_tokens
            // beside it would otherwise go below zero (-1 and below are "until the context is full" to llama-server).
            Integer left = less(request.effectiveMaxTokens(), transcript.tokens());
            return request.toBuilder()
                    .messages(messages)
                    .maxTokens(request.maxTokens() == null ? null : left)
                    .maxCompletionTokens(request.maxCompletionTokens() == null ? null : left)
                    .build();
        }

        @Override
        public boolean endsWithPrefix(ChatCompletionRequest request) {
            return !request.messages().isEmpty() && "assistant".equals(request.messages().getLast().role());
        }

        @Override
        public Integer maxTokens(ChatCompletionRequest request) {
            return request.effectiveMaxTokens();
        }

        @Override
        public List<ChatCompletionChunk> endAtLimit(int promptTokens, int tokens) {
            return List.of(
                    ChatCompletionChunk.of(null, 0, null, List.of(new ChatCompletionChunk.Choice(0,
                            new ChatCompletionChunk.Delta(null, null, null, null), null, "length")), null),
                    ChatCompletionChunk.of(null, 0, null, List.of(), Usage.of(Math.max(0, promptTokens), tokens)));
        }
    };

    /**
     * A chat answer relayed as its server's events: continued as {@link #CHAT} is (the router plans these
     * only for a route's last candidate, so no backend is left to continue it); an answer that reached
     * its limit just before its end gets that end as one piece.
     */
    Continuation<ChatCompletionRequest, ChatEvents> CHAT_EVENTS = new Continuation<>() {
        @Override
        public ChatCompletionRequest after(ChatCompletionRequest request, Transcript transcript) {
            return CHAT.after(request, transcript);
        }

        @Override
        public boolean endsWithPrefix(ChatCompletionRequest request) {
            return CHAT.endsWithPrefix(request);
        }

        @Override
        public Integer maxTokens(ChatCompletionRequest request) {
            return CHAT.maxTokens(request);
        }

        @Override
        public List<ChatEvents> endAtLimit(int promptTokens, int tokens) {
            return List.of(ChatEvents.of(CHAT.endAtLimit(promptTokens, tokens)));
        }
    };

    Continuation<CompletionRequest, Completion> COMPLETION = new Continuation<>() {
        @Override
        public CompletionRequest after(CompletionRequest r, Transcript transcript) {
            String prompt = r.promptText();
            // A token-id prompt cannot take text; echo would send the prompt a second time.
            if (prompt == null || Boolean.TRUE.equals(r.echo())) {
                return null;
            }
            return new CompletionRequest(r.model(), prompt + transcript.text(), r.suffix(),
                    less(r.maxTokens(), transcript.tokens()), r.temperature(), r.topP(), r.n(), r.stream(),
                    r.streamOptions(), r.logprobs(), r.echo(), r.stop(), r.presencePenalty(), r.frequencyPenalty(),
                    r.bestOf(), r.logitBias(), r.seed(), r.user(), new java.util.LinkedHashMap<>(r.extra()));
        }

        @Override
        public boolean endsWithPrefix(CompletionRequest request) {
            return false; // the text so far is part of the prompt, which any backend takes
        }

        @Override
        public Integer maxTokens(CompletionRequest request) {
            return request.maxTokens();
        }

        @Override
        public List<Completion> endAtLimit(int promptTokens, int tokens) {
            return List.of(
                    Completion.of(null, 0, null, List.of(new Completion.Choice(0, "", null, "length")), null),
                    Completion.of(null, 0, null, List.of(), Usage.of(Math.max(0, promptTokens), tokens)));
        }
    };
}
