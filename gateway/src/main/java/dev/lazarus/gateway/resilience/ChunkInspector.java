package dev.lazarus.gateway.resilience;

import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.Completion;
import dev.lazarus.backend.api.WholeAnswer;
import dev.lazarus.backend.api.openai.Usage;
import dev.lazarus.gateway.routing.Endpoint;
import dev.lazarus.gateway.routing.JsonUsage;
import dev.lazarus.gateway.routing.ProtocolPiece;
import java.util.List;
import java.util.Map;

/**
 * Reads what the resilience code needs from a chunk of either endpoint without serialising it:
 * the generated text, whether it carries tool-call or reasoning output, and its usage. Also makes
 * the two edits a resumed stream needs (no second role; usage of the whole answer).
 *
 * @param <T> chunk type
 */
public interface ChunkInspector<T> {

    /** Generated text this chunk appends, or null when it carries none. */
    String text(T chunk);

    /** Whether this chunk carries output a text prefix cannot continue (tool calls, reasoning). */
    boolean structuredOutput(T chunk);

    Usage usage(T chunk);

    T withUsage(T chunk, Usage usage);

    /** The chunk's fields beyond OpenAI's (llama.cpp's {@code timings}). */
    Map<String, Object> extra(T chunk);

    /**
     * The prompt's size in tokens as the backend that streams this chunk counted it, or -1 when the
     * chunk does not say: its usage, else llama.cpp's per-token {@code timings} (the prompt tokens it
     * evaluated, {@code prompt_n}, plus those it took from its cache, {@code cache_n}).
     */
    default int promptTokens(T chunk) {
        Usage usage = usage(chunk);
        if (usage != null) {
            return usage.promptTokens();
        }
        Map<String, Object> extra = extra(chunk);
        if (extra != null && extra.get("timings") instanceof Map<?, ?> timings
                && timings.get("prompt_n") instanceof Number evaluated && timings.get("cache_n") instanceof Number cached) {
            return evaluated.intValue() + cached.intValue();
        }
        return -1;
    }

    /** The chunk without a role announcement; null when nothing else is in it. */
    T withoutRole(T chunk);

    static <T> ChunkInspector<T> of(Endpoint<?, T> endpoint) {
        @SuppressWarnings("unchecked")
        ChunkInspector<T> inspector = (ChunkInspector<T>) switch (endpoint.kind()) {
            case CHAT -> CHAT;
            case CHAT_EVENTS -> ChatEventsInspector.INSTANCE;
            case PROTOCOL_EVENTS -> PROTOCOL_EVENTS;
            case COMPLETION -> COMPLETION;
            case WHOLE -> WHOLE;
            case JSON -> JSON;
        };
        return inspector;
    }

    /** The generated tokens the chunk adds: one per chunk that generates, for the backends we know. */
    default int tokens(T chunk) {
        return generated(chunk) ? 1 : 0;
    }

    /** Whether each "chunk" is a whole answer ({@link WholeAnswer}): all its tokens at once. */
    default boolean whole() {
        return false;
    }

    /** A whole answer's generation time as its server reported it, or -1 when unknown (or not whole). */
    default long generationNanos(T chunk) {
        return -1;
    }

    /** Whether the chunk adds anything a client counts as a generated token. */
    default boolean generated(T chunk) {
        String text = text(chunk);
        return (text != null && !text.isEmpty()) || structuredOutput(chunk);
    }

    ChunkInspector<ChatCompletionChunk> CHAT = new ChunkInspector<>() {
        @Override
        public String text(ChatCompletionChunk chunk) {
            List<ChatCompletionChunk.Choice> choices = chunk.choices();
            if (choices == null || choices.isEmpty()) {
                return null;
            }
            // n = 1 is all the gateway serves: one choice per chunk.
            ChatCompletionChunk.Delta delta = choices.getFirst().delta();
            return delta == null ? null : delta.content();
        }

        @Override
        public boolean structuredOutput(ChatCompletionChunk chunk) {
            List<ChatCompletionChunk.Choice> choices = chunk.choices();
            if (choices == null || choices.isEmpty() || choices.getFirst().delta() == null) {
                return false;
            }
            ChatCompletionChunk.Delta delta = choices.getFirst().delta();
            return (delta.toolCalls() != null && !delta.toolCalls().isEmpty())
                    || (delta.reasoningContent() != null && !delta.reasoningContent().isEmpty());
        }

        @Override
        public Usage usage(ChatCompletionChunk chunk) {
            return chunk.usage();
        }

        @Override
        public ChatCompletionChunk withUsage(ChatCompletionChunk chunk, Usage usage) {
            return chunk.withUsage(usage);
        }

        @Override
        public Map<String, Object> extra(ChatCompletionChunk chunk) {
            return chunk.extra();
        }

        @Override
        public ChatCompletionChunk withoutRole(ChatCompletionChunk chunk) {
            List<ChatCompletionChunk.Choice> choices = chunk.choices();
            if (choices == null || choices.isEmpty()) {
                return chunk;
            }
            ChatCompletionChunk.Choice choice = choices.getFirst();
            ChatCompletionChunk.Delta delta = choice.delta();
            if (delta == null || delta.role() == null) {
                return chunk;
            }
            boolean empty = (delta.content() == null || delta.content().isEmpty()) && !structuredOutput(chunk)
                    && choice.finishReason() == null && choice.logprobs() == null;
            if (empty) {
                return null;
            }
            ChatCompletionChunk.Delta stripped = new ChatCompletionChunk.Delta(null, delta.content(),
                    delta.reasoningContent(), delta.toolCalls());
            return chunk.withChoices(List.of(new ChatCompletionChunk.Choice(choice.index(), stripped,
                    choice.logprobs(), choice.finishReason())));
        }
    };

    /**
     * An answer passed on as it came (a whole answer, a JSON answer, a native stream's events): read for its usage
     * and timing, never resumed, so never edited.
     */
    interface PassedOn<T> extends ChunkInspector<T> {
        @Override
        default String text(T answer) {
            return null;
        }

        @Override
        default boolean structuredOutput(T answer) {
            return false;
        }

        @Override
        default T withUsage(T answer, Usage usage) {
            throw new UnsupportedOperationException("an answer passed on as it came is never edited");
        }

        @Override
        default Map<String, Object> extra(T answer) {
            return Map.of();
        }

        @Override
        default T withoutRole(T answer) {
            return answer;
        }
    }

    /**
     * A natively served stream's events (Messages, Responses), read for the output and usage the router's reader
     * found; their text is kept for a resume, which goes on as chat (never editing these).
     */
    PassedOn<ProtocolPiece> PROTOCOL_EVENTS = new PassedOn<>() {
        @Override
        public String text(ProtocolPiece piece) {
            return piece instanceof ProtocolPiece.Events events ? events.text() : null;
        }

        @Override
        public boolean structuredOutput(ProtocolPiece piece) {
            return piece instanceof ProtocolPiece.Events events && events.structured();
        }

        @Override
        public boolean generated(ProtocolPiece piece) {
            return tokens(piece) > 0;
        }

        @Override
        public int tokens(ProtocolPiece piece) {
            return piece instanceof ProtocolPiece.Events events ? events.generated() : 0;
        }

        @Override
        public Usage usage(ProtocolPiece piece) {
            return piece instanceof ProtocolPiece.Events events ? events.usage() : null;
        }
    };

    /** A whole non-streamed answer. */
    PassedOn<WholeAnswer> WHOLE = new PassedOn<>() {
        @Override
        public boolean generated(WholeAnswer answer) {
            return answer.usage() == null || answer.usage().completionTokens() > 0;
        }

        @Override
        public Usage usage(WholeAnswer answer) {
            return answer.usage();
        }

        @Override
        public boolean whole() {
            return true;
        }

        @Override
        public long generationNanos(WholeAnswer answer) {
            return answer.generationNanos();
        }
    };

    /** A JSON answer (embeddings, rerank, tokenize): nothing generated. */
    PassedOn<Map<String, Object>> JSON = new PassedOn<>() {
        @Override
        public boolean generated(Map<String, Object> answer) {
            return false;
        }

        @Override
        public Usage usage(Map<String, Object> answer) {
            return JsonUsage.of(answer);
        }

        @Override
        public boolean whole() {
            return true;
        }
    };

    ChunkInspector<Completion> COMPLETION = new ChunkInspector<>() {
        @Override
        public String text(Completion chunk) {
            List<Completion.Choice> choices = chunk.choices();
            return choices == null || choices.isEmpty() ? null : choices.getFirst().text();
        }

        @Override
        public boolean structuredOutput(Completion chunk) {
            return false;
        }

        @Override
        public Usage usage(Completion chunk) {
            return chunk.usage();
        }

        @Override
        public Completion withUsage(Completion chunk, Usage usage) {
            return chunk.withUsage(usage);
        }

        @Override
        public Map<String, Object> extra(Completion chunk) {
            return chunk.extra();
        }

        @Override
        public Completion withoutRole(Completion chunk) {
            return chunk;
        }
    };
}
