package dev.lazarus.gateway.api;

import dev.lazarus.backend.api.ProtocolEvent;
import java.util.LinkedHashMap;
import java.util.Map;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * Writes the gateway's identity (the answer's {@code id} and {@code model}) over a natively served answer's, where
 * its protocol keeps them, as the chat relay writes its own over a chat server's: the rest of the answer passes as
 * the server wrote it.
 */
public final class NativeIdentity {

    private static final TypeReference<Map<String, Object>> OBJECT = new TypeReference<>() {};

    private final JsonMapper json;

    public NativeIdentity(JsonMapper json) {
        this.json = json;
    }

    /** The whole answer with {@code id} and {@code model} set. */
    public Map<String, Object> answer(Map<String, Object> answer, String id, String model) {
        Map<String, Object> written = new LinkedHashMap<>(answer);
        written.put("id", id);
        written.put("model", model);
        return written;
    }

    /**
     * The event with {@code id} and {@code model} set in its object {@code within} (Messages' {@code message_start}
     * keeps them in {@code message}); an event without that object passes as it is.
     */
    @SuppressWarnings("unchecked")
    public ProtocolEvent event(ProtocolEvent event, String within, String id, String model) {
        Map<String, Object> data = json.readValue(event.data(), OBJECT);
        if (!(data.get(within) instanceof Map<?, ?> object)) {
            return event;
        }
        data.put(within, answer((Map<String, Object>) object, id, model));
        return new ProtocolEvent(event.name(), json.writeValueAsBytes(data));
    }
}
