package dev.lazarus.backend.api.openai;

import java.util.List;

/**
 * The events of a chat stream that came from the upstream together (in one read of its connection),
 * relayed as one piece: the gateway's operators, meters and writer see one signal for them instead of
 * one per event.
 */
public record ChatEvents(List<ChatEvent> events) {

    /** One typed chunk as a piece of its own. */
    public static ChatEvents of(ChatCompletionChunk chunk) {
        return new ChatEvents(List.of(ChatEvent.typed(chunk)));
    }

    public static ChatEvents of(List<ChatCompletionChunk> chunks) {
        return new ChatEvents(chunks.stream().map(ChatEvent::typed).toList());
    }

    /** The usage of the piece's last event that carries one; null when none does. */
    public Usage lastUsage() {
        Usage usage = null;
        for (ChatEvent event : events) {
            if (event.usage() != null) {
                usage = event.usage();
            }
        }
        return usage;
    }
}
