package dev.lazarus.kt.chat;

import java.util.List;

/**
 * gpt-oss's answer (OpenAI Harmony): a sequence of messages, each a header and a body,
 * <pre>{@code <|channel|>analysis<|message|>Need the weather.<|end|>
 * <|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>
 * <|start|>assistant<|channel|>final<|message|>It is sunny.}</pre>
 * split as llama-server splits it: the {@code analysis} channel is reasoning, a message addressed
 * {@code to=functions.NAME} (in the header's role or channel part) is a call whose arguments are its
 * body as written, other messages ({@code final}, a {@code commentary} preamble) are content. Bodies
 * stream; a call goes out when its message ends. Text outside any message is content. Not thread-safe.
 */
public final class HarmonyAnswer extends StreamingParser implements AnswerParser {

    static final String START = "<|start|>";
    static final String CHANNEL = "<|channel|>";
    static final String MESSAGE = "<|message|>";
    static final List<String> ENDS = List.of("<|end|>", "<|call|>", "<|return|>", START);
    static final String FUNCTIONS = "to=functions.";
    static final List<String> MARKERS = List.of(START, CHANNEL, MESSAGE, "<|constrain|>", "<|end|>", "<|call|>",
            "<|return|>");

    private enum Kind { REASONING, CONTENT, CALL }

    private final boolean splitReasoning;
    private final int maxCalls;
    private Kind body; // null while reading a header
    private String recipient;
    private int calls;

    /**
     * @param splitReasoning whether the analysis channel goes to reasoning (else to the content)
     * @param maxCalls       calls to recognise (0 when the request offers no tools: calls stay content)
     */
    public HarmonyAnswer(boolean splitReasoning, int maxCalls) {
        this.splitReasoning = splitReasoning;
        this.maxCalls = maxCalls;
    }

    @Override
    void drain(List<AnswerPiece> out, boolean end) {
        while (!pending.isEmpty()) {
            if (body == null && !header(out, end)) {
                return;
            }
            if (body != null && !body(out, end)) {
                return;
            }
        }
    }

    /** Reads a header up to {@code <|message|>}; false when more text is needed. */
    private boolean header(List<AnswerPiece> out, boolean end) {
        String text = pending.toString();
        if (!text.startsWith(START) && !text.startsWith(CHANNEL)) {
            if (!end && (START.startsWith(text) || CHANNEL.startsWith(text))) {
                return false;
            }
            body = Kind.CONTENT; // text outside any message
            recipient = null;
            return true;
        }
        int message = text.indexOf(MESSAGE);
        if (message < 0) {
            if (end) {
                emit(out, Kind.CONTENT, text);
                pending.setLength(0);
            }
            return false;
        }
        String header = text.substring(0, message);
        pending.delete(0, message + MESSAGE.length());
        int to = header.indexOf(FUNCTIONS);
        recipient = to < 0 ? null : header.substring(to + FUNCTIONS.length()).split("[\\s<]", 2)[0];
        int channel = header.indexOf(CHANNEL);
        String channelName = channel < 0 ? "" : header.substring(channel + CHANNEL.length()).strip().split("\\s", 2)[0];
        if (recipient != null && !recipient.isEmpty() && calls < maxCalls) {
            body = Kind.CALL;
        } else if (channelName.equals("analysis") && splitReasoning) {
            body = Kind.REASONING;
        } else {
            body = Kind.CONTENT;
        }
        return true;
    }

    /** Reads a body up to its end marker; false when more text is needed. */
    private boolean body(List<AnswerPiece> out, boolean end) {
        int stop = -1;
        String marker = "";
        for (String e : ENDS) {
            int at = pending.indexOf(e);
            if (at >= 0 && (stop < 0 || at < stop)) {
                stop = at;
                marker = e;
            }
        }
        if (stop < 0 && !end) {
            if (body != Kind.CALL) { // stream what cannot be the start of an end marker
                int ready = pending.length() - Markers.partialAtEnd(pending, ENDS);
                emit(out, body, pending.substring(0, ready));
                pending.delete(0, ready);
            }
            return false;
        }
        int bodyEnd = stop < 0 ? pending.length() : stop;
        String text = pending.substring(0, bodyEnd);
        // a following <|start|> opens the next message; the other markers end this one
        pending.delete(0, marker.equals(START) ? bodyEnd : bodyEnd + marker.length());
        if (body == Kind.CALL) {
            String arguments = text.strip();
            if (CallJson.isJson(arguments)) {
                calls++;
                out.add(new AnswerPiece.Call(recipient, arguments));
            } else {
                emit(out, Kind.CONTENT, text);
            }
        } else {
            emit(out, body, text);
        }
        body = null;
        return true;
    }

    private static void emit(List<AnswerPiece> out, Kind kind, String text) {
        if (!text.isEmpty()) {
            out.add(kind == Kind.REASONING ? new AnswerPiece.Reasoning(text) : new AnswerPiece.Text(text));
        }
    }
}
