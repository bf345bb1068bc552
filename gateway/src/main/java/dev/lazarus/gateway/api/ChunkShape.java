package dev.lazarus.gateway.api;

import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.Completion;
import dev.lazarus.backend.api.openai.Usage;
import java.util.List;
import java.util.function.Supplier;
import reactor.core.publisher.Flux;

/**
 * How the gateway reshapes a backend's chunk stream for one client, for either chunk type: every
 * chunk gets the response's identity; the usage chunk that backends always send is kept only when
 * the client asked for it ({@code stream_options.include_usage}), and then always as a separate
 * final chunk with empty choices, as OpenAI sends it.
 *
 * @param <T> chunk type
 */
public interface ChunkShape<T> {

    T withIdentity(T chunk, ResponseIdentity identity);

    Usage usage(T chunk);

    boolean hasChoices(T chunk);

    T withUsage(T chunk, Usage usage);

    T withoutChoices(T chunk);

    ChunkShape<ChatCompletionChunk> CHAT = new ChunkShape<>() {
        public ChatCompletionChunk withIdentity(ChatCompletionChunk c, ResponseIdentity id) {
            return c.withIdentity(id.id(), id.created(), id.model());
        }

        public Usage usage(ChatCompletionChunk c) {
            return c.usage();
        }

        public boolean hasChoices(ChatCompletionChunk c) {
            return c.choices() != null && !c.choices().isEmpty();
        }

        public ChatCompletionChunk withUsage(ChatCompletionChunk c, Usage usage) {
            return c.withUsage(usage);
        }

        public ChatCompletionChunk withoutChoices(ChatCompletionChunk c) {
            return c.withChoices(List.of());
        }
    };

    ChunkShape<Completion> COMPLETION = new ChunkShape<>() {
        public Completion withIdentity(Completion c, ResponseIdentity id) {
            return c.withIdentity(id.id(), id.created(), id.model());
        }

        public Usage usage(Completion c) {
            return c.usage();
        }

        public boolean hasChoices(Completion c) {
            return c.choices() != null && !c.choices().isEmpty();
        }

        public Completion withUsage(Completion c, Usage usage) {
            return c.withUsage(usage);
        }

        public Completion withoutChoices(Completion c) {
            return c.withChoices(List.of());
        }
    };

    /**
     * The client's view of a backend stream.
     *
     * @param identity asked per chunk: the model it names may change when a resumed answer moves on
     */
    default Flux<T> shape(Flux<T> backendChunks, Supplier<ResponseIdentity> identity, boolean includeUsage) {
        return backendChunks.concatMapIterable(raw -> shape(raw, identity.get(), includeUsage));
    }

    /** What the client gets of one backend chunk: none, it, or (usage on a content chunk) two. */
    default List<T> shape(T raw, ResponseIdentity identity, boolean includeUsage) {
        T chunk = withIdentity(raw, identity);
        Usage usage = usage(chunk);
        if (usage == null) {
            return List.of(chunk);
        }
        if (!hasChoices(chunk)) {
            return includeUsage ? List.of(chunk) : List.of();
        }
        // A backend that put usage on a content chunk: split it into content, then usage.
        T content = withUsage(chunk, null);
        return includeUsage ? List.of(content, withoutChoices(chunk)) : List.of(content);
    }
}
