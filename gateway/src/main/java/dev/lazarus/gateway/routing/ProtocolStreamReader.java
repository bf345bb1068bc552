package dev.lazarus.gateway.routing;

import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.ChatProtocol;
import dev.lazarus.backend.api.ProtocolEvent;
import dev.lazarus.backend.api.openai.Usage;
import java.util.List;
import java.util.Map;
import reactor.core.publisher.Flux;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reads a natively served stream's events for what the gateway meters, judges and would resume from, by their
 * names: the deltas (generated output; a text delta's text, kept for a resume), the few events that carry usage or
 * open a block or item (parsed; the rest pass unread), and the protocol's last event, without which the stream was
 * cut. One per call.
 */
final class ProtocolStreamReader {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final TypeReference<Map<String, Object>> OBJECT = new TypeReference<>() {};

    private final ChatProtocol protocol;
    private int promptTokens;
    private int outputTokens;
    private boolean ended;

    ProtocolStreamReader(ChatProtocol protocol) {
        this.protocol = protocol;
    }

    ProtocolPiece.Events read(List<ProtocolEvent> events) {
        Usage usage = null;
        int generated = 0;
        StringBuilder text = new StringBuilder();
        boolean structured = false;
        for (ProtocolEvent event : events) {
            String name = event.name();
            switch (protocol) {
                case MESSAGES -> {
                    switch (name) {
                        case "content_block_delta" -> {
                            generated++;
                            if (data(event).get("delta") instanceof Map<?, ?> delta) {
                                if ("text_delta".equals(delta.get("type")) && delta.get("text") instanceof String t) {
                                    text.append(t);
                                } else {
                                    structured = true;
                                }
                            }
                        }
                        case "content_block_start" -> structured |= data(event).get("content_block") instanceof Map<?, ?> b
                                && !"text".equals(b.get("type"));
                        case "message_start" -> usage = messageUsage(event, "message");
                        case "message_delta" -> usage = messageUsage(event, null);
                        case "message_stop" -> ended = true;
                        default -> { }
                    }
                }
                case RESPONSES -> {
                    if (name.equals("response.output_text.delta")) {
                        generated++;
                        if (data(event).get("delta") instanceof String t) {
                            text.append(t);
                        }
                    } else if (name.startsWith("response.") && name.endsWith(".delta")) {
                        generated++;
                        structured = true; // reasoning, function call arguments
                    } else if (name.equals("response.output_item.added")) {
                        structured |= data(event).get("item") instanceof Map<?, ?> item
                                && !"message".equals(item.get("type"));
                    } else if (name.equals("response.completed") || name.equals("response.incomplete")
                            || name.equals("response.failed")) {
                        ended = true;
                        if (data(event).get("response") instanceof Map<?, ?> response
                                && response.get("usage") instanceof Map<?, ?> counts) {
                            usage = JsonUsage.ofInputOutput(counts);
                        }
                    }
                }
            }
        }
        return new ProtocolPiece.Events(events, usage, generated, text.toString(), structured);
    }

    /** Nothing more, or the error of a stream that ended before its protocol's last event. */
    <T> Flux<T> end() {
        return ended ? Flux.empty() : Flux.error(new BackendException(BackendErrorKind.UPSTREAM,
                "the server's " + protocol.path() + " stream ended before its last event"));
    }

    /**
     * Messages counts its prompt in {@code message_start} and its output in {@code message_delta} (which may
     * repeat the input counts): the usage of both so far.
     */
    private Usage messageUsage(ProtocolEvent event, String within) {
        Map<String, Object> data = data(event);
        Object holder = within == null ? data : data.get(within);
        if (holder instanceof Map<?, ?> object && object.get("usage") instanceof Map<?, ?> counts) {
            Usage usage = JsonUsage.ofInputOutput(counts);
            if (counts.get("input_tokens") instanceof Number) {
                promptTokens = usage.promptTokens();
            }
            outputTokens = usage.completionTokens();
        }
        return Usage.of(promptTokens, outputTokens);
    }

    private static Map<String, Object> data(ProtocolEvent event) {
        try {
            return JSON.readValue(event.data(), OBJECT);
        } catch (RuntimeException notJson) {
            return Map.of();
        }
    }
}
