package dev.lazarus.gateway.api;

import static dev.lazarus.gateway.api.RawBodyReader.bool;
import static dev.lazarus.gateway.api.RawBodyReader.integer;
import static dev.lazarus.gateway.api.RawBodyReader.longInteger;
import static dev.lazarus.gateway.api.RawBodyReader.number;
import static dev.lazarus.gateway.api.RawBodyReader.string;
import static dev.lazarus.gateway.api.RawBodyReader.taken;

import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.backend.api.openai.MessageContent;
import dev.lazarus.backend.api.openai.RawRequest;
import dev.lazarus.backend.api.openai.StreamOptions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;

/**
 * The common chat request read in one pass of Jackson's streaming parser ({@link RawBodyReader}, with a
 * new instance of these fields per body), keeping the body's bytes ({@link RawRequest}) so that an HTTP
 * backend sends them on: text messages, the sampling scalars, {@code stream_options} and unknown fields.
 * Anything else (tools, content parts, a null, a value of another type, a repeated field, a body that
 * is not a UTF-8 object) gives null, and the request is bound by data-binding instead, which also says
 * what is wrong with a bad one: this reader accepts only what data-binding would bind to the same
 * request, and never answers an error itself.
 */
final class ChatRequestFields implements RawBodyReader.Fields<ChatCompletionRequest> {

    List<ChatMessage> messages;
    Double temperature;
    Double topP;
    Integer n;
    Boolean stream;
    StreamOptions streamOptions;
    List<String> stop;
    Integer maxTokens;
    Integer maxCompletionTokens;
    Double presencePenalty;
    Double frequencyPenalty;
    Boolean logprobs;
    Integer topLogprobs;
    Long seed;
    String user;
    Boolean parallelToolCalls;

    @Override
    public RawBodyReader.Field read(String name, JsonParser p, JsonToken v) {
        return switch (name) {
            case "messages" -> taken(messages = messages(p, v));
            case "temperature" -> taken(temperature = number(p, v));
            case "top_p" -> taken(topP = number(p, v));
            case "presence_penalty" -> taken(presencePenalty = number(p, v));
            case "frequency_penalty" -> taken(frequencyPenalty = number(p, v));
            case "n" -> taken(n = integer(p, v));
            case "max_tokens" -> taken(maxTokens = integer(p, v));
            case "max_completion_tokens" -> taken(maxCompletionTokens = integer(p, v));
            case "top_logprobs" -> taken(topLogprobs = integer(p, v));
            case "seed" -> taken(seed = longInteger(p, v));
            case "stream" -> taken(stream = bool(v));
            case "logprobs" -> taken(logprobs = bool(v));
            case "parallel_tool_calls" -> taken(parallelToolCalls = bool(v));
            case "user" -> taken(user = string(p, v));
            case "stop" -> taken(stop = RawBodyReader.stop(p, v));
            case "stream_options" -> taken(streamOptions = RawBodyReader.streamOptions(p, v));
            // bound by data-binding: fields of richer shapes
            case "tools", "tool_choice", "response_format", "logit_bias" -> RawBodyReader.Field.REFUSED;
            default -> RawBodyReader.Field.UNKNOWN;
        };
    }

    @Override
    public ChatCompletionRequest request(RawBodyReader.Body body) {
        return new ChatCompletionRequest(body.model(), messages, temperature, topP, n, stream,
                streamOptions, stop, maxTokens, maxCompletionTokens, presencePenalty, frequencyPenalty,
                null, logprobs, topLogprobs, seed, user, null, null, parallelToolCalls, null, body.extra())
                .withRaw(body.raw());
    }

    /** An array of messages with a string role and content (and name); null for anything else. */
    private static List<ChatMessage> messages(JsonParser p, JsonToken v) {
        if (v != JsonToken.START_ARRAY) {
            return null;
        }
        List<ChatMessage> messages = new ArrayList<>();
        JsonToken t;
        while ((t = p.nextToken()) == JsonToken.START_OBJECT) {
            String role = null;
            String content = null;
            String name = null;
            while ((t = p.nextToken()) == JsonToken.PROPERTY_NAME) {
                String field = p.currentName();
                if (p.nextToken() != JsonToken.VALUE_STRING) {
                    return null;
                }
                switch (field) {
                    case "role" -> {
                        if (role != null) {
                            return null;
                        }
                        role = p.getString();
                    }
                    case "content" -> {
                        if (content != null) {
                            return null;
                        }
                        content = p.getString();
                    }
                    case "name" -> {
                        if (name != null) {
                            return null;
                        }
                        name = p.getString();
                    }
                    default -> {
                        return null;
                    }
                }
            }
            if (t != JsonToken.END_OBJECT) {
                return null;
            }
            messages.add(new ChatMessage(role, content == null ? null : MessageContent.ofText(content), name,
                    null, null, null, new LinkedHashMap<>())); // data-binding's empty any-setter map
        }
        return t == JsonToken.END_ARRAY ? messages : null;
    }
}
