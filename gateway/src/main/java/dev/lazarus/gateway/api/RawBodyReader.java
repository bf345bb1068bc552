package dev.lazarus.gateway.api;

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
 * A request object read in one pass of Jackson's streaming parser, its bytes kept ({@link RawRequest})
 * for an HTTP backend to send on: the common chat ({@link ChatRequestFields}) and legacy completion
 * ({@link CompletionRequestFields}) requests. This reads the frame (one UTF-8 object, each field once,
 * no nulls, a string {@code model}, nothing after it) and unknown fields, as data-binding's
 * {@code @JsonAnySetter} would; a request type's {@link Fields} read the fields it knows and make the
 * request. Anything it cannot take gives null, and data-binding reads the body instead (and says what
 * is wrong with a bad one): accept only what data-binding binds to the same request.
 */
final class RawBodyReader {

    /** What a request type's reader made of one top-level field. */
    enum Field {
        /** read, and taken */
        READ,
        /** a value this reader does not take: data-binding reads the body */
        REFUSED,
        /** not a field of the request type: kept among its extra fields */
        UNKNOWN
    }

    /**
     * The fields one request type knows (other than {@code model}), read into a new instance per body.
     *
     * @param <R> the request type
     */
    interface Fields<R> {
        /** Reads the value of field {@code name}, the parser at its first token {@code v} (never a null). */
        Field read(String name, JsonParser p, JsonToken v);

        /** The request of the body read whole, with the fields read; it carries {@code body.raw()}. */
        R request(Body body);
    }

    /**
     * A body read whole.
     *
     * @param extra the unknown fields in order: the request must keep this very map (the bytes are sent
     *              on only while its entries are those read)
     */
    record Body(String model, Map<String, Object> extra, RawRequest raw) {}

    /** The parser factory with the request limits (depth, tokens): a body over them is left to data-binding. */
    private final TokenStreamFactory factory;
    /** Reads the values of unknown fields, as data-binding's {@code @JsonAnySetter} would. */
    private final ObjectReader values;

    RawBodyReader(TokenStreamFactory factory, ObjectReader untyped) {
        this.factory = factory;
        this.values = untyped;
    }

    /** The request in {@code body}, its known fields read by {@code fields}; null where data-binding must read it. */
    <R> R read(byte[] body, Fields<R> fields) {
        int first = 0;
        while (first < body.length && (body[first] == ' ' || body[first] == '\n' || body[first] == '\r'
                || body[first] == '\t')) {
            first++;
        }
        if (first == body.length || body[first] != '{') {
            return null; // not an object, or not UTF-8 (a byte-order mark, UTF-16): bound and checked as before
        }
        Body read;
        try (JsonParser p = factory.createParser(ObjectReadContext.empty(), body)) {
            read = read(p, body, fields);
        } catch (JacksonException | IllegalArgumentException e) {
            return null;
        }
        return read == null ? null : fields.request(read);
    }

    private Body read(JsonParser p, byte[] body, Fields<?> fields) {
        if (p.nextToken() != JsonToken.START_OBJECT) {
            return null;
        }
        String model = null;
        int modelStart = -1;
        int modelEnd = -1;
        Map<String, Object> extra = new LinkedHashMap<>();
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
            if (name.equals("model")) {
                if (v != JsonToken.VALUE_STRING) {
                    return null;
                }
                modelStart = (int) p.currentTokenLocation().getByteOffset();
                model = p.getString();
                modelEnd = (int) p.currentLocation().getByteOffset();
                if (modelStart < 0 || modelEnd <= modelStart || body[modelStart] != '"' || body[modelEnd - 1] != '"') {
                    return null;
                }
                continue;
            }
            Field field = fields.read(name, p, v);
            if (field == Field.REFUSED || field == Field.UNKNOWN && !unknown(p, v, body, name, extra)) {
                return null;
            }
        }
        if (t != JsonToken.END_OBJECT || model == null) {
            return null;
        }
        int closingBrace = (int) p.currentTokenLocation().getByteOffset();
        if (p.nextToken() != null || closingBrace < 0 || body[closingBrace] != '}') {
            return null; // trailing tokens: data-binding refuses them
        }
        return new Body(model, extra, RawRequest.of(body, modelStart, modelEnd, closingBrace, extra));
    }

    /** The value's bytes, scanned by the limited parser, then bound as data-binding binds them. */
    private boolean unknown(JsonParser p, JsonToken v, byte[] body, String name, Map<String, Object> extra) {
        int start = (int) p.currentTokenLocation().getByteOffset();
        if (v.isScalarValue()) {
            p.finishToken();
        } else {
            p.skipChildren();
        }
        int end = (int) p.currentLocation().getByteOffset();
        if (start < 0 || end <= start) {
            return false;
        }
        extra.put(name, values.readValue(body, start, end - start));
        return true;
    }

    /** {@link Field#READ} where {@code value} was taken, else {@link Field#REFUSED}. */
    static Field taken(Object value) {
        return value != null ? Field.READ : Field.REFUSED;
    }

    /** A JSON number as a double (an integer is a valid number), as the strict binding takes it. */
    static Double number(JsonParser p, JsonToken v) {
        return v == JsonToken.VALUE_NUMBER_INT || v == JsonToken.VALUE_NUMBER_FLOAT ? p.getDoubleValue() : null;
    }

    /** A JSON integer within int's range. */
    static Integer integer(JsonParser p, JsonToken v) {
        return v == JsonToken.VALUE_NUMBER_INT && p.getNumberType() == JsonParser.NumberType.INT ? p.getIntValue() : null;
    }

    /** A JSON integer within long's range. */
    static Long longInteger(JsonParser p, JsonToken v) {
        return v == JsonToken.VALUE_NUMBER_INT && p.getNumberType() != JsonParser.NumberType.BIG_INTEGER
                ? p.getLongValue() : null;
    }

    static Boolean bool(JsonToken v) {
        return v == JsonToken.VALUE_TRUE ? Boolean.TRUE : v == JsonToken.VALUE_FALSE ? Boolean.FALSE : null;
    }

    static String string(JsonParser p, JsonToken v) {
        return v == JsonToken.VALUE_STRING ? p.getString() : null;
    }

    /** A string (one stop sequence) or an array of strings. */
    static List<String> stop(JsonParser p, JsonToken v) {
        if (v == JsonToken.VALUE_STRING) {
            List<String> stop = new ArrayList<>();
            stop.add(p.getString());
            return stop;
        }
        return v == JsonToken.START_ARRAY ? strings(p, p.nextToken()) : null;
    }

    /** The strings of an array from its current token {@code t} to its end; null where it holds anything else. */
    static List<String> strings(JsonParser p, JsonToken t) {
        List<String> strings = new ArrayList<>();
        while (t == JsonToken.VALUE_STRING) {
            strings.add(p.getString());
            t = p.nextToken();
        }
        return t == JsonToken.END_ARRAY ? strings : null;
    }

    /** {@code {"include_usage": true|false}} or {@code {}}. */
    static StreamOptions streamOptions(JsonParser p, JsonToken v) {
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
