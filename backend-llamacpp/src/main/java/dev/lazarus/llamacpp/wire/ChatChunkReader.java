package dev.lazarus.llamacpp.wire;

import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.Logprobs;
import dev.lazarus.backend.api.openai.RawJson;
import dev.lazarus.backend.api.openai.ToolCall;
import dev.lazarus.backend.api.openai.Usage;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.ObjectReader;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reads a {@code chat.completion.chunk} with Jackson's streaming parser, as data-binding would read
 * it into a {@link ChatCompletionChunk} but without its per-object machinery: the fields of a token
 * chunk (ids, {@code choices[].delta} text, {@code finish_reason}) are read by hand; the rarer parts
 * ({@code usage}, {@code logprobs}, {@code tool_calls}, unknown top-level fields such as llama.cpp's
 * {@code timings}) are bound by the mapper where they stand (through the parser:
 * {@code ObjectMapper.readValue(JsonParser, ...)} would insist on the end of the input there); unknown
 * fields inside a choice or a delta are skipped, as data-binding skips them. Anything of another
 * shape (a field of an unexpected type) makes it read the whole chunk again with plain
 * data-binding, so the result is always what data-binding gives.
 */
public final class ChatChunkReader {

    private static final TypeReference<List<ToolCall>> TOOL_CALLS = new TypeReference<>() {};

    private final JsonMapper json;
    private final ObjectReader bound;

    public ChatChunkReader(JsonMapper json) {
        this.json = json;
        this.bound = json.readerFor(ChatCompletionChunk.class);
    }

    public ChatCompletionChunk read(byte[] bytes, int offset, int length) {
        return read(bytes, offset, length, null);
    }

    /**
     * One chunk of a stream whose {@code timings} llama-server sends with every token only because
     * the backend asked ({@code timings_per_token}): they are kept on the first chunk that carries
     * them and on a chunk with usage; on the others they are neither bound nor passed on (cut from
     * the chunk's bytes).
     *
     * @param trim the stream's state, or null to keep every chunk's timings
     */
    public ChatCompletionChunk read(byte[] bytes, int offset, int length, TimingsTrim trim) {
        ChatCompletionChunk chunk = readByHand(bytes, offset, length, trim);
        // else data-binding reads it, or says what is wrong with it
        return chunk != null ? chunk : bound.readValue(bytes, offset, length);
    }

    /**
     * The chunk read by the streaming parser, with its bytes and where its identity values stand
     * ({@link ChatCompletionChunk#raw}), or null when it has another shape (or is no JSON).
     */
    public ChatCompletionChunk readByHand(byte[] bytes, int offset, int length) {
        return readByHand(bytes, offset, length, null);
    }

    private ChatCompletionChunk readByHand(byte[] bytes, int offset, int length, TimingsTrim trim) {
        try (JsonParser p = json.createParser(bytes, offset, length)) {
            ChatCompletionChunk chunk = readChunk(p, bytes, offset, length, trim);
            return chunk != null && p.nextToken() == null ? chunk : null;
        } catch (OtherShape | JacksonException e) {
            return null;
        }
    }

    /** The chunk, or null where data-binding must decide (not an object). */
    private ChatCompletionChunk readChunk(JsonParser p, byte[] bytes, int offset, int length, TimingsTrim trim) {
        if (p.nextToken() != JsonToken.START_OBJECT) {
            return null;
        }
        int[] spans = RawJson.noSpans();
        spans[0] = JsonSpans.bodyStart(p, offset);
        String id = null;
        String object = null;
        long created = 0;
        String model = null;
        String fingerprint = null;
        List<ChatCompletionChunk.Choice> choices = null;
        Usage usage = null;
        Map<String, Object> extra = null;
        int timingsStart = -1;
        int timingsEnd = -1;
        for (String name = p.nextName(); name != null; name = p.nextName()) {
            JsonToken value = p.nextToken();
            switch (name) {
                case "id" -> {
                    id = string(p, value);
                    JsonSpans.note(p, bytes, offset, spans, 1);
                }
                case "object" -> object = string(p, value);
                case "created" -> {
                    created = value == JsonToken.VALUE_NULL ? 0 : longValue(p, value);
                    JsonSpans.note(p, bytes, offset, spans, 3);
                }
                case "model" -> {
                    model = string(p, value);
                    JsonSpans.note(p, bytes, offset, spans, 5);
                }
                case "system_fingerprint" -> fingerprint = string(p, value);
                case "choices" -> choices = value == JsonToken.VALUE_NULL ? null : choices(p, value);
                case "usage" -> usage = value == JsonToken.VALUE_NULL ? null : p.readValueAs(Usage.class);
                case "timings" -> {
                    if (trim != null && value == JsonToken.START_OBJECT) {
                        // Decided once the whole chunk is read (its usage may come later): bound, or cut.
                        timingsStart = offset + (int) p.currentTokenLocation().getByteOffset();
                        p.skipChildren();
                        timingsEnd = offset + (int) p.currentTokenLocation().getByteOffset() + 1;
                    } else {
                        if (extra == null) {
                            extra = new LinkedHashMap<>();
                        }
                        extra.put(name, p.readValueAs(Object.class));
                    }
                }
                default -> {
                    if (extra == null) {
                        extra = new LinkedHashMap<>();
                    }
                    extra.put(name, p.readValueAs(Object.class));
                }
            }
        }
        if (timingsStart >= 0) {
            if (trim.keeps(usage != null) || !cut(bytes, offset, timingsStart, timingsEnd, spans)) {
                if (extra == null) {
                    extra = new LinkedHashMap<>();
                }
                extra.put("timings", json.readValue(bytes, timingsStart, timingsEnd - timingsStart, Object.class));
            }
        }
        // data-binding hands the any-setter an empty map when nothing was unknown
        return new ChatCompletionChunk(id, object, created, model, fingerprint, choices, usage,
                extra == null ? new LinkedHashMap<>() : extra, new RawJson(bytes, offset, length, spans));
    }

    /**
     * Notes the {@code "timings": {...}} field whose value spans {@code [valueStart, valueEnd)} as the
     * cut of {@code spans}, with the comma that separates it from its neighbour; false when its name
     * is not written plainly there (an escaped name), and then it is kept.
     */
    public static boolean cut(byte[] bytes, int offset, int valueStart, int valueEnd, int[] spans) {
        int i = valueStart - 1;
        while (i > offset && isSpace(bytes[i])) {
            i--;
        }
        if (bytes[i] != ':') {
            return false;
        }
        i--;
        while (i > offset && isSpace(bytes[i])) {
            i--;
        }
        int nameStart = i - TIMINGS.length + 1;
        if (nameStart < offset || !java.util.Arrays.equals(bytes, nameStart, i + 1, TIMINGS, 0, TIMINGS.length)) {
            return false;
        }
        int before = nameStart - 1;
        while (before > offset && isSpace(bytes[before])) {
            before--;
        }
        if (bytes[before] == ',') {
            spans[7] = before;
            spans[8] = valueEnd;
            return true;
        }
        // the first field: the comma after it goes
        int after = valueEnd;
        while (after < bytes.length && isSpace(bytes[after])) {
            after++;
        }
        spans[7] = nameStart;
        spans[8] = after < bytes.length && bytes[after] == ',' ? after + 1 : valueEnd;
        return true;
    }

    private static final byte[] TIMINGS = "\"timings\"".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    private static boolean isSpace(byte b) {
        return b == ' ' || b == '\t' || b == '\n' || b == '\r';
    }

    /** One stream's state: whether a chunk with timings was kept yet. */
    public static final class TimingsTrim {
        private boolean seen;

        /** Whether a chunk with timings keeps them: the first such chunk, and any with usage. */
        boolean keeps(boolean hasUsage) {
            if (hasUsage) {
                return true;
            }
            boolean first = !seen;
            seen = true;
            return first;
        }
    }

    private List<ChatCompletionChunk.Choice> choices(JsonParser p, JsonToken value) {
        expect(value, JsonToken.START_ARRAY);
        List<ChatCompletionChunk.Choice> choices = new ArrayList<>(1);
        for (JsonToken t = p.nextToken(); t != JsonToken.END_ARRAY; t = p.nextToken()) {
            expect(t, JsonToken.START_OBJECT);
            int index = 0;
            ChatCompletionChunk.Delta delta = null;
            Logprobs logprobs = null;
            String finishReason = null;
            for (String name = p.nextName(); name != null; name = p.nextName()) {
                JsonToken v = p.nextToken();
                switch (name) {
                    case "index" -> index = v == JsonToken.VALUE_NULL ? 0 : intValue(p, v);
                    case "delta" -> delta = v == JsonToken.VALUE_NULL ? null : delta(p, v);
                    case "logprobs" -> logprobs = v == JsonToken.VALUE_NULL ? null : p.readValueAs(Logprobs.class);
                    case "finish_reason" -> finishReason = string(p, v);
                    default -> p.skipChildren(); // data-binding skips fields it does not know here too ("refusal")
                }
            }
            choices.add(new ChatCompletionChunk.Choice(index, delta, logprobs, finishReason));
        }
        return choices;
    }

    private ChatCompletionChunk.Delta delta(JsonParser p, JsonToken value) {
        expect(value, JsonToken.START_OBJECT);
        String role = null;
        String content = null;
        String reasoning = null;
        List<ToolCall> toolCalls = null;
        for (String name = p.nextName(); name != null; name = p.nextName()) {
            JsonToken v = p.nextToken();
            switch (name) {
                case "role" -> role = string(p, v);
                case "content" -> content = string(p, v);
                case "reasoning_content" -> reasoning = string(p, v);
                case "tool_calls" -> toolCalls = v == JsonToken.VALUE_NULL ? null : p.readValueAs(TOOL_CALLS);
                default -> p.skipChildren(); // data-binding skips fields it does not know here too ("refusal")
            }
        }
        return new ChatCompletionChunk.Delta(role, content, reasoning, toolCalls);
    }

    private static String string(JsonParser p, JsonToken value) {
        if (value == JsonToken.VALUE_NULL) {
            return null;
        }
        expect(value, JsonToken.VALUE_STRING);
        return p.getString();
    }

    private static long longValue(JsonParser p, JsonToken value) {
        expect(value, JsonToken.VALUE_NUMBER_INT);
        return p.getLongValue();
    }

    private static int intValue(JsonParser p, JsonToken value) {
        expect(value, JsonToken.VALUE_NUMBER_INT);
        return p.getIntValue();
    }

    private static void expect(JsonToken actual, JsonToken expected) {
        if (actual != expected) {
            throw OtherShape.INSTANCE;
        }
    }

    /** The chunk is not of the shape read by hand; data-binding reads it (and reports what is wrong). */
    private static final class OtherShape extends RuntimeException {
        static final OtherShape INSTANCE = new OtherShape();

        private OtherShape() {
            super(null, null, false, false);
        }
    }
}
