package dev.lazarus.gateway.api;

import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.backend.api.openai.MessageContent;
import dev.lazarus.backend.api.openai.RawRequest;
import dev.lazarus.backend.api.openai.StreamOptions;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.ObjectReadContext;
import tools.jackson.core.TokenStreamFactory;
import tools.jackson.databind.ObjectReader;

/**
 * The common chat request read in one pass of Jackson's streaming parser, keeping the body's bytes
 * ({@link RawRequest}) so that an HTTP backend sends them on: text messages, the sampling scalars,
 * {@code stream_options} and unknown fields. Anything else (tools, content parts, a null, a value of
 * another type, a repeated field, a body that is not a UTF-8 object) gives null, and the request is
 * bound by data-binding instead, which also says what is wrong with a bad one: this reader accepts
 * only what data-binding would bind to the same request, and never answers an error itself.
 */
final class ChatRequestReader {

    /** The parser factory with the request limits (depth, tokens): a body over them is left to data-binding. */
    private final TokenStreamFactory factory;
    /** Reads the values of unknown fields, as data-binding's {@code @JsonAnySetter} would. */
    private final ObjectReader values;

    ChatRequestReader(TokenStreamFactory factory, ObjectReader untyped) {
        this.factory = factory;
        this.values = untyped;
    }

    /** The request in {@code body}, or null where data-binding must read it. */
    ChatCompletionRequest read(byte[] body) {
        int first = 0;
        while (first < body.length && (body[first] == ' ' || body[first] == '\n' || body[first] == '\r'
                || body[first] == '\t')) {
            first++;
        }
        if (first == body.length || body[first] != '{') {
            return null; // not an object, or not UTF-8 (a byte-order mark, UTF-16): bound and checked as before
        }
        try (JsonParser p = factory.createParser(ObjectReadContext.empty(), body)) {
            return read(p, body);
        } catch (JacksonException | IllegalArgumentException e) {
            return null;
        }
    }

    private static final class Fields {
        String model;
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
        final Map<String, Object> extra = new LinkedHashMap<>();
    }

    private ChatCompletionRequest read(JsonParser p, byte[] body) {
        if (p.nextToken() != JsonToken.START_OBJECT) {
            return null;
        }
        Fields f = new Fields();
        int modelStart = -1;
        int modelEnd = -1;
        Set<String> seen = new HashSet<>();
        JsonToken t;
        while ((t = p.nextToken()) == JsonToken.PROPERTY_NAME) {
            String name = p.currentName();
            if (!seen.add(name)) {
                return null;
            }
            JsonToken v = p.nextToken();
            if (v == JsonToken.VALUE_NULL) {
                return null; // a null must stay told apart from an absent field (RawRequest)
            }
            boolean ok = switch (name) {
                case "model" -> {
                    if (v != JsonToken.VALUE_STRING) {
                        yield false;
                    }
                    modelStart = (int) p.currentTokenLocation().getByteOffset();
                    f.model = p.getString();
                    modelEnd = (int) p.currentLocation().getByteOffset();
                    yield modelStart >= 0 && modelEnd > modelStart && body[modelStart] == '"'
                            && body[modelEnd - 1] == '"';
                }
                case "messages" -> (f.messages = messages(p, v)) != null;
                case "temperature" -> (f.temperature = number(p, v)) != null;
                case "top_p" -> (f.topP = number(p, v)) != null;
                case "presence_penalty" -> (f.presencePenalty = number(p, v)) != null;
                case "frequency_penalty" -> (f.frequencyPenalty = number(p, v)) != null;
                case "n" -> (f.n = integer(p, v)) != null;
                case "max_tokens" -> (f.maxTokens = integer(p, v)) != null;
                case "max_completion_tokens" -> (f.maxCompletionTokens = integer(p, v)) != null;
                case "top_logprobs" -> (f.topLogprobs = integer(p, v)) != null;
                case "seed" -> {
                    if (v != JsonToken.VALUE_NUMBER_INT || p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
                        yield false;
                    }
                    f.seed = p.getLongValue();
                    yield true;
                }
                case "stream" -> (f.stream = bool(v)) != null;
                case "logprobs" -> (f.logprobs = bool(v)) != null;
                case "parallel_tool_calls" -> (f.parallelToolCalls = bool(v)) != null;
                case "user" -> v == JsonToken.VALUE_STRING && (f.user = p.getString()) != null;
                case "stop" -> (f.stop = stop(p, v)) != null;
                case "stream_options" -> (f.streamOptions = streamOptions(p, v)) != null;
                // bound by data-binding: fields of richer shapes
                case "tools", "tool_choice", "response_format", "logit_bias" -> false;
                default -> {
                    // The value's bytes, scanned by the limited parser, then bound as data-binding binds them.
                    int start = (int) p.currentTokenLocation().getByteOffset();
                    if (v.isScalarValue()) {
                        p.finishToken();
                    } else {
                        p.skipChildren();
                    }
                    int end = (int) p.currentLocation().getByteOffset();
                    if (start < 0 || end <= start) {
                        yield false;
                    }
                    f.extra.put(name, values.readValue(body, start, end - start));
                    yield true;
                }
            };
            if (!ok) {
                return null;
            }
        }
        if (t != JsonToken.END_OBJECT || f.model == null) {
            return null;
        }
        int closingBrace = (int) p.currentTokenLocation().getByteOffset();
        if (p.nextToken() != null || closingBrace < 0 || body[closingBrace] != '}') {
            return null; // trailing tokens: data-binding refuses them
        }
        ChatCompletionRequest request = new ChatCompletionRequest(f.model, f.messages, f.temperature, f.topP, f.n,
                f.stream, f.streamOptions, f.stop, f.maxTokens, f.maxCompletionTokens, f.presencePenalty,
                f.frequencyPenalty, null, f.logprobs, f.topLogprobs, f.seed, f.user, null, null, f.parallelToolCalls,
                null, f.extra);
        return request.withRaw(RawRequest.of(body, modelStart, modelEnd, closingBrace, request.extra()));
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

    /** A JSON number as a double (an integer is a valid number), as the strict binding takes it. */
    private static Double number(JsonParser p, JsonToken v) {
        return v == JsonToken.VALUE_NUMBER_INT || v == JsonToken.VALUE_NUMBER_FLOAT ? p.getDoubleValue() : null;
    }

    /** A JSON integer within int's range. */
    private static Integer integer(JsonParser p, JsonToken v) {
        return v == JsonToken.VALUE_NUMBER_INT && p.getNumberType() == JsonParser.NumberType.INT ? p.getIntValue() : null;
    }

    private static Boolean bool(JsonToken v) {
        return v == JsonToken.VALUE_TRUE ? Boolean.TRUE : v == JsonToken.VALUE_FALSE ? Boolean.FALSE : null;
    }

    /** A string (one stop sequence) or an array of strings. */
    private static List<String> stop(JsonParser p, JsonToken v) {
        List<String> stop = new ArrayList<>();
        if (v == JsonToken.VALUE_STRING) {
            stop.add(p.getString());
            return stop;
        }
        if (v != JsonToken.START_ARRAY) {
            return null;
        }
        JsonToken t;
        while ((t = p.nextToken()) == JsonToken.VALUE_STRING) {
            stop.add(p.getString());
        }
        return t == JsonToken.END_ARRAY ? stop : null;
    }

    /** {@code {"include_usage": true|false}} or {@code {}}. */
    private static StreamOptions streamOptions(JsonParser p, JsonToken v) {
        if (v != JsonToken.START_OBJECT) {
            return null;
        }
        Boolean includeUsage = null;
        JsonToken t;
        while ((t = p.nextToken()) == JsonToken.PROPERTY_NAME) {
            if (!"include_usage".equals(p.currentName()) || includeUsage != null
                    || (includeUsage = bool(p.nextToken())) == null) {
                return null;
            }
        }
        return t == JsonToken.END_OBJECT ? new StreamOptions(includeUsage) : null;
    }
}
