package dev.lazarus.kt.chat;

import dev.lazarus.backend.api.openai.Tool;
import java.util.ArrayList;
import java.util.List;

/**
 * DeepSeek-V3 and R1: one section of calls,
 * <pre>{@code <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather
 * ```json
 * {"city": "Paris"}
 * ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>}</pre>
 * (V3.1 writes {@code <｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris"}<｜tool▁call▁end｜>}: read too).
 * Arguments stay as the model wrote them.
 */
final class DeepSeekCalls implements ToolCallSyntax.Tagged {

    /**
     * How the template writes a call, as llama-server (b11669) learns it by rendering calls whose arguments are
     * objects: V3/R1's {@code function<｜tool▁sep｜>NAME} and a json fence, V3.1's {@code NAME<｜tool▁sep｜>} and the JSON,
     * or (a template that joins the arguments to the text as a string, as V3 and R1 ship) a Python dict literal that
     * its parser then never reads.
     */
    enum Layout { FENCED, INLINE, UNREAD }

    private final Layout layout;

    DeepSeekCalls() {
        this(Layout.UNREAD);
    }

    DeepSeekCalls(Layout layout) {
        this.layout = layout;
    }

    static DeepSeekCalls of(String source) {
        boolean json = source.contains("['arguments'] | tojson");
        boolean inline = source.contains("tool▁call▁begin｜>' + tool['function']['name'] + '<｜tool▁sep｜>'");
        return new DeepSeekCalls(!json ? Layout.UNREAD : inline ? Layout.INLINE : Layout.FENCED);
    }

    Layout layout() {
        return layout;
    }

    static final String OPEN = "<｜tool▁calls▁begin｜>";
    static final String CLOSE = "<｜tool▁calls▁end｜>";
    static final String CALL_OPEN = "<｜tool▁call▁begin｜>";
    static final String CALL_CLOSE = "<｜tool▁call▁end｜>";
    static final String SEP = "<｜tool▁sep｜>";

    @Override
    public String open() {
        return OPEN;
    }

    @Override
    public List<String> markers() {
        return List.of(OPEN, CLOSE, CALL_OPEN, CALL_CLOSE, SEP);
    }

    @Override
    public String close() {
        return CLOSE;
    }

    @Override
    public List<AnswerPiece.Call> parse(String body, List<Tool> tools) {
        List<AnswerPiece.Call> calls = new ArrayList<>();
        String rest = body.strip();
        while (!rest.isEmpty()) {
            if (!rest.startsWith(CALL_OPEN)) {
                return null;
            }
            int close = rest.indexOf(CALL_CLOSE);
            String call = rest.substring(CALL_OPEN.length(), close < 0 ? rest.length() : close);
            AnswerPiece.Call parsed = call(call);
            if (parsed == null) {
                return null;
            }
            calls.add(parsed);
            rest = close < 0 ? "" : rest.substring(close + CALL_CLOSE.length()).strip();
        }
        return calls.isEmpty() ? null : calls;
    }

    private static AnswerPiece.Call call(String text) {
        int sep = text.indexOf(SEP);
        if (sep < 0) {
            return null;
        }
        String head = text.substring(0, sep).strip();
        String tail = text.substring(sep + SEP.length());
        String name;
        String arguments;
        if (head.equals("function")) { // V3/R1: the name, a newline, the arguments in a json fence
            int newline = tail.indexOf('\n');
            if (newline < 0) {
                return null;
            }
            name = tail.substring(0, newline).strip();
            arguments = unfence(tail.substring(newline + 1).strip());
        } else { // V3.1
            name = head;
            arguments = tail.strip();
        }
        if (name.isEmpty() || arguments == null || !CallJson.isJson(arguments)) {
            return null;
        }
        return new AnswerPiece.Call(name, arguments);
    }

    private static String unfence(String text) {
        if (!text.startsWith("```")) {
            return text;
        }
        int newline = text.indexOf('\n');
        if (newline < 0 || !text.endsWith("```")) {
            return null;
        }
        return text.substring(newline + 1, text.length() - 3).strip();
    }
}
