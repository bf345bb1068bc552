package dev.lazarus.llamacpp.wire;

import dev.lazarus.backend.api.PrefillProgress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * Takes llama-server's prompt-progress events out of a stream whose request asked for them
 * ({@code "return_progress": true}), so that its reader sees the stream it would have had without them, and tells
 * each to a {@link PrefillProgress}. While it reads the prompt, llama-server sends an event carrying
 * {@code prompt_progress} at once and after each batch: on {@code /v1/chat/completions} a role chunk, on
 * {@code /v1/completions} an empty text chunk, on {@code /v1/responses} a {@code response.in_progress}; after them the
 * answer goes on as it would have. Responses differs in one more way: its opening events ({@code response.created},
 * the first {@code response.in_progress}) come before the prompt is read instead of with the first token, so they are
 * held back until the first event of the answer (the {@code response.in_progress} without its {@code prompt_progress}),
 * as a server that was not asked sends them.
 *
 * <p>Only events before the answer's first are looked at (one search of their bytes each); the answer's events pass
 * as they came. A server that ignores the field sends none, and its stream passes unchanged. One per stream, fed from
 * one thread at a time.
 */
public final class PromptProgress {

    private static final byte[] KEY = "\"prompt_progress\":".getBytes(StandardCharsets.US_ASCII);

    private final JsonMapper json;
    private final PrefillProgress listener;
    /** Whether the answer began: nothing more is looked at. */
    private boolean answering;
    /** Responses' opening events, held until the answer begins. */
    private final List<SseDecoder.Event> opening = new ArrayList<>(2);
    private boolean openedProgress;

    /** @param listener told of each progress event; null for none */
    public PromptProgress(JsonMapper json, PrefillProgress listener) {
        this.json = json;
        this.listener = listener;
    }

    /**
     * The events of one read without the progress ones: an empty list where the read held only progress (or
     * held-back opening events), which is no event of the answer, but tells that the server is alive.
     */
    public List<SseDecoder.Event> filter(List<SseDecoder.Event> events) {
        if (answering) {
            return events;
        }
        List<SseDecoder.Event> kept = new ArrayList<>(events.size() + opening.size());
        for (SseDecoder.Event event : events) {
            if (answering) {
                kept.add(event);
            } else if (!event.isError() && contains(event, KEY)) {
                progressed(event);
            } else if (isOpening(event)) {
                opening.add(event);
            } else {
                answering = true;
                kept.addAll(opening);
                opening.clear();
                kept.add(event);
            }
        }
        return kept;
    }

    /** Opening events still held where the stream ended before its answer began (a cut stream: its reader judges it). */
    public List<SseDecoder.Event> rest() {
        List<SseDecoder.Event> rest = List.copyOf(opening);
        opening.clear();
        return rest;
    }

    private static boolean isOpening(SseDecoder.Event event) {
        return event.name().equals("response.created") || event.name().equals("response.in_progress");
    }

    private void progressed(SseDecoder.Event event) {
        JsonNode data = null;
        if (listener != null || (!openedProgress && event.name().equals("response.in_progress"))) {
            data = json.readTree(event.bytes(), event.offset(), event.length());
        }
        if (!openedProgress && event.name().equals("response.in_progress") && data instanceof ObjectNode object) {
            // the first one stands for the response.in_progress a server not asked sends: kept, without the field
            openedProgress = true;
            ObjectNode plain = object.deepCopy();
            plain.remove("prompt_progress");
            byte[] bytes = json.writeValueAsBytes(plain);
            opening.add(new SseDecoder.Event(event.name(), bytes, 0, bytes.length));
        }
        if (listener != null) {
            JsonNode progress = data.path("prompt_progress");
            listener.progressed(progress.path("processed").asInt(-1), progress.path("total").asInt(-1));
        }
    }

    /** Asks a llama-server for progress events unless the request decides itself; true where it was added. */
    public static boolean ask(Map<String, Object> request) {
        if (request.containsKey("return_progress")) {
            return false;
        }
        request.put("return_progress", true);
        return true;
    }

    private static boolean contains(SseDecoder.Event event, byte[] key) {
        byte[] b = event.bytes();
        for (int i = event.offset(), last = event.offset() + event.length() - key.length; i <= last; i++) {
            if (java.util.Arrays.equals(b, i, i + key.length, key, 0, key.length)) {
                return true;
            }
        }
        return false;
    }
}
