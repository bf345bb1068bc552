package dev.lazarus.llamacpp.wire;

import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.WholeAnswer;
import dev.lazarus.backend.api.openai.RawJson;
import dev.lazarus.backend.api.openai.Usage;
import java.util.Map;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectReader;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reads of a whole non-streaming answer only what the gateway needs, in one pass of Jackson's
 * streaming parser over its bytes, and keeps the bytes: where the top-level {@code id},
 * {@code created} and {@code model} values stand (the gateway writes its own there), {@code usage},
 * and llama.cpp's {@code timings.predicted_ms}. Everything else is skipped unread. An answer that is
 * an {@code error} object is thrown as the upstream's error.
 */
public final class WholeAnswerReader {

    private final JsonMapper json;
    private final UpstreamErrors errors;
    /** Made once: the parser's own readValueAs looks the deserializer up again for every answer. */
    private final ObjectReader usageReader;
    /** A usage's token details, as the record binds them; one member of it, so what follows is no trailing token. */
    private final ObjectReader detailsReader;

    public WholeAnswerReader(JsonMapper json, UpstreamErrors errors) {
        this.json = json;
        this.errors = errors;
        this.usageReader = json.readerFor(Usage.class);
        this.detailsReader = json.readerFor(new TypeReference<Map<String, Object>>() {})
                .without(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    }

    public WholeAnswer read(byte[] body) {
        int[] spans = RawJson.noSpans();
        Usage usage = null;
        long generationNanos = -1;
        try (JsonParser p = json.createParser(body)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw malformed("not a JSON object");
            }
            spans[0] = JsonSpans.bodyStart(p, 0);
            for (String name = p.nextName(); name != null; name = p.nextName()) {
                JsonToken value = p.nextToken();
                switch (name) {
                    case "id" -> JsonSpans.note(p, body, 0, spans, 1);
                    case "created" -> JsonSpans.note(p, body, 0, spans, 3);
                    case "model" -> JsonSpans.note(p, body, 0, spans, 5);
                    case "usage" -> usage = value == JsonToken.VALUE_NULL ? null : usage(p, value, body);
                    case "timings" -> generationNanos = predictedNanos(p, value);
                    case "error" -> {
                        JsonNode error = p.readValueAsTree();
                        throw errors.fromStreamError(json.createObjectNode().set("error", error));
                    }
                    default -> p.skipChildren();
                }
            }
            if (p.nextToken() != null) {
                throw malformed("more after the JSON object");
            }
        } catch (JacksonException e) {
            throw malformed(e.getOriginalMessage());
        }
        return new WholeAnswer(new RawJson(body, 0, body.length, spans), usage, generationNanos);
    }

    /**
     * The answer's usage. The common one, the three counts as plain ints and the token details as objects, is
     * read here (the details by the mapper, as maps): binding the whole object to the record costs more than
     * the rest of the answer's read (its creator called through a method handle made again per answer). Any
     * other member or value (a count missing or of another type) has the whole object bound by the mapper from
     * its bytes, as it was before.
     */
    private Usage usage(JsonParser p, JsonToken value, byte[] body) {
        if (value != JsonToken.START_OBJECT) {
            return p.readValueAs(Usage.class); // whatever the mapper makes of it (an error, mostly)
        }
        int start = (int) p.currentTokenLocation().getByteOffset();
        int[] counts = new int[3];
        Map<String, Object> promptDetails = null;
        Map<String, Object> completionDetails = null;
        int seen = 0;
        boolean plain = true;
        for (String name = p.nextName(); name != null; name = p.nextName()) {
            JsonToken token = p.nextToken();
            switch (name) {
                case "prompt_tokens", "completion_tokens", "total_tokens" -> {
                    int count = name.startsWith("prompt") ? 0 : name.startsWith("completion") ? 1 : 2;
                    if (token == JsonToken.VALUE_NUMBER_INT && p.getNumberType() == JsonParser.NumberType.INT) {
                        counts[count] = p.getIntValue();
                        seen |= 1 << count;
                    } else {
                        plain = false;
                    }
                }
                case "prompt_tokens_details", "completion_tokens_details" -> {
                    Map<String, Object> read = token == JsonToken.START_OBJECT ? detailsReader.readValue(p) : null;
                    plain &= token == JsonToken.START_OBJECT || token == JsonToken.VALUE_NULL;
                    if (name.startsWith("prompt")) {
                        promptDetails = read;
                    } else {
                        completionDetails = read;
                    }
                }
                default -> plain = false;
            }
            p.skipChildren();
        }
        // a count left out is the mapper's to judge (it refuses a missing int)
        if (plain && seen == 0b111) {
            return new Usage(counts[0], counts[1], counts[2], promptDetails, completionDetails);
        }
        int end = (int) p.currentTokenLocation().getByteOffset() + 1;
        return usageReader.readValue(body, start, end - start);
    }

    private static long predictedNanos(JsonParser p, JsonToken value) {
        if (value != JsonToken.START_OBJECT) {
            p.skipChildren();
            return -1;
        }
        long nanos = -1;
        for (String name = p.nextName(); name != null; name = p.nextName()) {
            JsonToken v = p.nextToken();
            if ("predicted_ms".equals(name) && v.isNumeric()) {
                nanos = (long) (p.getDoubleValue() * 1e6);
            } else {
                p.skipChildren();
            }
        }
        return nanos;
    }

    private BackendException malformed(String why) {
        return errors.malformedAnswer(why);
    }
}
