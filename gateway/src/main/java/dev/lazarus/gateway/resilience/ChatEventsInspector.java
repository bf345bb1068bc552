package dev.lazarus.gateway.resilience;

import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatEvent;
import dev.lazarus.backend.api.openai.ChatEvents;
import dev.lazarus.backend.api.openai.Usage;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Reads a piece of a chat stream relayed as its server's events ({@link ChatEvents}) for what the
 * resilience code and the meters need: the sum of its events, each raw event by what its scan found,
 * each typed one as {@link ChunkInspector#CHAT} reads it.
 */
final class ChatEventsInspector implements ChunkInspector<ChatEvents> {

    static final ChatEventsInspector INSTANCE = new ChatEventsInspector();

    private static final ChunkInspector<ChatCompletionChunk> TYPED = ChunkInspector.CHAT;

    private ChatEventsInspector() {
    }

    @Override
    public String text(ChatEvents events) {
        StringBuilder text = null;
        for (ChatEvent event : events.events()) {
            String piece = event.isRaw() ? event.text() : TYPED.text(event.chunk());
            if (piece != null) {
                text = text == null ? new StringBuilder(piece) : text.append(piece);
            }
        }
        return text == null ? null : text.toString();
    }

    @Override
    public boolean structuredOutput(ChatEvents events) {
        for (ChatEvent event : events.events()) {
            if (event.isRaw() ? event.structured() : TYPED.structuredOutput(event.chunk())) {
                return true;
            }
        }
        return false;
    }

    @Override
    public int tokens(ChatEvents events) {
        int tokens = 0;
        for (ChatEvent event : events.events()) {
            if (event.isRaw() ? event.generated() : TYPED.generated(event.chunk())) {
                tokens++;
            }
        }
        return tokens;
    }

    @Override
    public boolean generated(ChatEvents events) {
        return tokens(events) > 0;
    }

    @Override
    public Usage usage(ChatEvents events) {
        return events.lastUsage();
    }

    @Override
    public int promptTokens(ChatEvents events) {
        for (ChatEvent event : events.events()) {
            int prompt = event.isRaw()
                    ? event.usage() != null ? event.usage().promptTokens() : event.promptTokens()
                    : TYPED.promptTokens(event.chunk());
            if (prompt >= 0) {
                return prompt;
            }
        }
        return -1;
    }

    @Override
    public Map<String, Object> extra(ChatEvents events) {
        return Map.of();
    }

    /**
     * The piece with its usage event's usage replaced: a raw usage event (it has no choices: one beside
     * choices is read typed) becomes a typed one that carries only the new usage.
     */
    @Override
    public ChatEvents withUsage(ChatEvents events, Usage usage) {
        List<ChatEvent> changed = new ArrayList<>(events.events().size());
        for (ChatEvent event : events.events()) {
            if (event.usage() == null) {
                changed.add(event);
            } else if (event.isRaw()) {
                changed.add(ChatEvent.typed(ChatCompletionChunk.of(null, 0, null, List.of(), usage)));
            } else {
                changed.add(ChatEvent.typed(TYPED.withUsage(event.chunk(), usage)));
            }
        }
        return new ChatEvents(changed);
    }

    /**
     * The piece without a role announcement: a typed event as {@link ChunkInspector#CHAT} strips it; a raw
     * event that announces only the role is left out (one that also carries output stays as it is: the
     * router plans these pieces only where no continuation follows them). Null when nothing is left.
     */
    @Override
    public ChatEvents withoutRole(ChatEvents events) {
        List<ChatEvent> changed = new ArrayList<>(events.events().size());
        for (ChatEvent event : events.events()) {
            if (!event.isRaw()) {
                ChatCompletionChunk stripped = TYPED.withoutRole(event.chunk());
                if (stripped != null) {
                    changed.add(stripped == event.chunk() ? event : ChatEvent.typed(stripped));
                }
            } else if (!event.role() || event.generated() || event.finishReason() || event.usage() != null) {
                changed.add(event);
            }
        }
        return changed.isEmpty() ? null : new ChatEvents(changed);
    }
}
