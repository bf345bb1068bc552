package dev.lazarus.llamacpp.wire;

import dev.lazarus.backend.api.openai.ChatEvent;
import dev.lazarus.backend.api.openai.RawJson;
import dev.lazarus.backend.api.openai.Usage;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Scans a {@code chat.completion.chunk} of the common shape for what the gateway reads of it, with no
 * parse into types: where its identity values stand, choice 0's content string, whether it announces
 * a role, carries tool calls or reasoning, or finishes, and its usage (bound by the mapper: one event
 * per stream). Every other value is stepped over, its structure checked. A chunk of another shape
 * (not an object, several choices, usage beside choices, an {@code error}, an escaped field name, a
 * value of an unexpected type, broken JSON) is left to {@link ChatChunkReader}: {@link #scan} returns
 * null. One per stream: it keeps the first {@code timings} llama-server sends (the prompt's size) and
 * cuts the later ones, as {@link ChatChunkReader.TimingsTrim} does.
 */
public final class ChatEventScanner {

    private final JsonMapper json;
    private final ChatChunkReader.TimingsTrim trim;
    private boolean promptCounted;

    /** @param trim the stream's timings trim, or null to keep every event's timings */
    public ChatEventScanner(JsonMapper json, ChatChunkReader.TimingsTrim trim) {
        this.json = json;
        this.trim = trim;
    }

    /** The event, or null when it is of another shape (then read it into types). */
    public ChatEvent scan(byte[] bytes, int offset, int length) {
        try {
            return new Scan(bytes, offset, offset + length).event();
        } catch (OtherShape e) {
            return null;
        }
    }

    private final class Scan {
        private final byte[] b;
        private final int end;
        private int at;
        private final int[] spans = RawJson.noSpans();
        private int contentStart = -1;
        private int contentEnd = -1;
        private boolean structured;
        private boolean hasChoices;
        private boolean role;
        private boolean finish;
        private int usageStart = -1;
        private int usageEnd;
        private int timingsStart = -1;
        private int timingsEnd;
        private final int offset;

        Scan(byte[] b, int offset, int end) {
            this.b = b;
            this.offset = offset;
            this.at = offset;
            this.end = end;
        }

        ChatEvent event() {
            space();
            expect('{');
            spans[0] = at;
            members(this::topField);
            space();
            if (at != end) {
                throw OtherShape.INSTANCE;
            }
            Usage usage = usageStart < 0 ? null : json.readValue(b, usageStart, usageEnd - usageStart, Usage.class);
            if (usage != null && hasChoices) {
                throw OtherShape.INSTANCE; // split in two by the gateway: typed
            }
            int promptTokens = -1;
            if (timingsStart >= 0) {
                boolean keep = trim == null || trim.keeps(usage != null)
                        || !ChatChunkReader.cut(b, offset, timingsStart, timingsEnd, spans);
                if (keep && !promptCounted) {
                    promptTokens = promptTokens(json.readTree(b, timingsStart, timingsEnd - timingsStart));
                    promptCounted = promptTokens >= 0;
                }
            }
            return new ChatEvent(new RawJson(b, offset, end - offset, spans), null, contentStart, contentEnd,
                    structured, hasChoices, role, finish, usage, promptTokens);
        }

        private void topField(int nameStart, int nameEnd) {
            switch (name(nameStart, nameEnd)) {
                case "id" -> stringSpan(1);
                case "model" -> stringSpan(5);
                case "created" -> {
                    int start = at;
                    if (!number()) {
                        throw OtherShape.INSTANCE;
                    }
                    spans[3] = start;
                    spans[4] = at;
                }
                case "choices" -> choices();
                case "usage" -> {
                    if (!literal(NULL)) {
                        usageStart = at;
                        object();
                        usageEnd = at;
                    }
                }
                case "timings" -> {
                    if (peek() != '{') {
                        throw OtherShape.INSTANCE;
                    }
                    timingsStart = at;
                    object();
                    timingsEnd = at;
                }
                case "error" -> throw OtherShape.INSTANCE;
                default -> value();
            }
        }

        private void stringSpan(int slot) {
            if (peek() != '"') {
                throw OtherShape.INSTANCE;
            }
            spans[slot] = at;
            string();
            spans[slot + 1] = at;
        }

        private void choices() {
            expect('[');
            space();
            if (peek() == ']') {
                at++;
                return;
            }
            hasChoices = true;
            expect('{');
            members(this::choiceField);
            space();
            expect(']'); // a second choice (n > 1) is another shape
        }

        private void choiceField(int nameStart, int nameEnd) {
            switch (name(nameStart, nameEnd)) {
                case "delta" -> {
                    expect('{');
                    members(this::deltaField);
                }
                case "finish_reason" -> {
                    if (!literal(NULL)) {
                        if (peek() != '"') {
                            throw OtherShape.INSTANCE;
                        }
                        string();
                        finish = true;
                    }
                }
                case "index" -> {
                    if (!literal(ZERO)) {
                        throw OtherShape.INSTANCE;
                    }
                }
                default -> value();
            }
        }

        private void deltaField(int nameStart, int nameEnd) {
            switch (name(nameStart, nameEnd)) {
                case "content" -> {
                    if (!literal(NULL)) {
                        if (peek() != '"') {
                            throw OtherShape.INSTANCE;
                        }
                        contentStart = at;
                        string();
                        contentEnd = at;
                    }
                }
                case "role" -> {
                    if (!literal(NULL)) {
                        if (peek() != '"') {
                            throw OtherShape.INSTANCE;
                        }
                        string();
                        role = true;
                    }
                }
                case "tool_calls" -> {
                    int start = at;
                    if (!literal(NULL)) {
                        expect('[');
                        space();
                        boolean empty = peek() == ']';
                        at = start;
                        value();
                        structured |= !empty;
                    }
                }
                case "reasoning_content" -> {
                    if (!literal(NULL)) {
                        if (peek() != '"') {
                            throw OtherShape.INSTANCE;
                        }
                        int start = at;
                        string();
                        structured |= at - start > 2;
                    }
                }
                default -> value();
            }
        }

        /** The members of an object whose opening brace was read, each name handed to {@code field}. */
        private void members(Field field) {
            space();
            if (peek() == '}') {
                at++;
                return;
            }
            while (true) {
                space();
                if (peek() != '"') {
                    throw OtherShape.INSTANCE;
                }
                int nameStart = at + 1;
                string();
                int nameEnd = at - 1;
                space();
                expect(':');
                space();
                field.value(nameStart, nameEnd);
                space();
                if (peek() == ',') {
                    at++;
                } else {
                    expect('}');
                    return;
                }
            }
        }

        /** A field name; one with an escape is another shape (a name must be matched as written). */
        private String name(int from, int to) {
            for (int i = from; i < to; i++) {
                if (b[i] == '\\') {
                    throw OtherShape.INSTANCE;
                }
            }
            return switch (to - from) {
                case 2 -> is(from, ID) ? "id" : "";
                case 5 -> is(from, MODEL) ? "model" : is(from, DELTA) ? "delta" : is(from, USAGE) ? "usage"
                        : is(from, INDEX) ? "index" : is(from, ERROR) ? "error" : "";
                case 4 -> is(from, ROLE) ? "role" : "";
                case 7 -> is(from, CREATED) ? "created" : is(from, CHOICES) ? "choices" : is(from, TIMINGS) ? "timings"
                        : is(from, CONTENT) ? "content" : "";
                case 10 -> is(from, TOOL_CALLS) ? "tool_calls" : "";
                case 13 -> is(from, FINISH_REASON) ? "finish_reason" : "";
                case 17 -> is(from, REASONING) ? "reasoning_content" : "";
                default -> "";
            };
        }

        private boolean is(int from, byte[] name) {
            return Arrays.equals(b, from, from + name.length, name, 0, name.length);
        }

        private void value() {
            if (at >= end) {
                throw OtherShape.INSTANCE;
            }
            switch (peek()) {
                case '"' -> string();
                case '{' -> object();
                case '[' -> {
                    at++;
                    space();
                    if (peek() == ']') {
                        at++;
                        return;
                    }
                    while (true) {
                        space();
                        value();
                        space();
                        if (peek() == ',') {
                            at++;
                        } else {
                            expect(']');
                            return;
                        }
                    }
                }
                default -> {
                    if (!literal(NULL) && !literal(TRUE) && !literal(FALSE) && !number()) {
                        throw OtherShape.INSTANCE;
                    }
                }
            }
        }

        private void object() {
            expect('{');
            members((s, e) -> value());
        }

        /** Steps over a string from its opening quote to just after its closing one. */
        private void string() {
            at++;
            while (at < end) {
                byte c = b[at];
                if (c == '"') {
                    at++;
                    return;
                }
                if (c == '\\') {
                    at++;
                } else if (c >= 0 && c < 0x20) {
                    throw OtherShape.INSTANCE; // a raw control character: not JSON
                }
                at++;
            }
            throw OtherShape.INSTANCE;
        }

        private boolean number() {
            int start = at;
            while (at < end && "+-.eE0123456789".indexOf(b[at]) >= 0) {
                at++;
            }
            return at > start && b[start] != '+' && b[start] != '.' && b[start] != 'e' && b[start] != 'E';
        }

        private boolean literal(byte[] word) {
            int to = at + word.length;
            if (to <= end && Arrays.equals(b, at, to, word, 0, word.length)
                    && (to == end || ",}] \t\r\n".indexOf(b[to]) >= 0)) {
                at = to;
                return true;
            }
            return false;
        }

        private void space() {
            while (at < end && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) {
                at++;
            }
        }

        /** The byte the scan stands on, or 0 at the event's end (never a byte of the next one). */
        private byte peek() {
            return at < end ? b[at] : 0;
        }

        private void expect(char c) {
            if (peek() != c) {
                throw OtherShape.INSTANCE;
            }
            at++;
        }
    }

    /** llama.cpp's per-token timings: the prompt's size is what it evaluated plus what it took from its cache. */
    private static int promptTokens(JsonNode timings) {
        JsonNode evaluated = timings.get("prompt_n");
        JsonNode cached = timings.get("cache_n");
        return evaluated != null && evaluated.isNumber() && cached != null && cached.isNumber()
                ? evaluated.asInt() + cached.asInt() : -1;
    }

    @FunctionalInterface
    private interface Field {
        /** Reads the value of the field whose name spans {@code [nameStart, nameEnd)}; the scan stands on it. */
        void value(int nameStart, int nameEnd);
    }

    private static final byte[] NULL = ascii("null");
    private static final byte[] TRUE = ascii("true");
    private static final byte[] FALSE = ascii("false");
    private static final byte[] ZERO = ascii("0");
    private static final byte[] ID = ascii("id");
    private static final byte[] MODEL = ascii("model");
    private static final byte[] DELTA = ascii("delta");
    private static final byte[] USAGE = ascii("usage");
    private static final byte[] INDEX = ascii("index");
    private static final byte[] ERROR = ascii("error");
    private static final byte[] ROLE = ascii("role");
    private static final byte[] CREATED = ascii("created");
    private static final byte[] CHOICES = ascii("choices");
    private static final byte[] TIMINGS = ascii("timings");
    private static final byte[] CONTENT = ascii("content");
    private static final byte[] TOOL_CALLS = ascii("tool_calls");
    private static final byte[] FINISH_REASON = ascii("finish_reason");
    private static final byte[] REASONING = ascii("reasoning_content");

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    /** The event is not of the shape scanned here. */
    private static final class OtherShape extends RuntimeException {
        static final OtherShape INSTANCE = new OtherShape();

        private OtherShape() {
            super(null, null, false, false);
        }
    }
}
