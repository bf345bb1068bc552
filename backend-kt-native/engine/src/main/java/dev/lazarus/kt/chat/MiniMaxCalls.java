package dev.lazarus.kt.chat;

import dev.lazarus.backend.api.openai.Tool;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * MiniMax-M2's calls: one block holding one or more {@code <invoke>} elements, a parameter per tag,
 * <pre>{@code <minimax:tool_call>
 * <invoke name="get_weather">
 * <parameter name="city">Paris</parameter>
 * <parameter name="days">3</parameter>
 * </invoke>
 * </minimax:tool_call>}</pre>
 * read as llama-server b11669's parser for the format (the one its template analysis derives) reads it: the function
 * must be one the request offers; its required parameters come first, in the order the schema declares them, then
 * optional ones in any order, no others; a parameter that may be a string is the raw text up to
 * {@code </parameter>\n}, any other one JSON value as the model spelled it, with no space around it; whitespace
 * between the tags is layout. The arguments become one compact JSON object in the order written.
 *
 * <p>llama-server separates the invokes of one block by {@code ", "} and answers 500 for the newline MiniMax-M2
 * writes between them (and for a second block, or text after the block); both separators are read here, and what
 * follows a block is left to {@link ToolCallParser}.
 */
final class MiniMaxCalls implements ToolCallSyntax.Tagged {

    static final String BLOCK_OPEN = "<minimax:tool_call>";
    static final String BLOCK_CLOSE = "</minimax:tool_call>";
    static final String INVOKE = "<invoke name=\"";
    static final String INVOKE_NAME_END = "\">\n";
    static final String INVOKE_CLOSE = "</invoke>\n";
    static final String PARAMETER = "<parameter name=\"";
    static final String PARAMETER_NAME_END = "\">";
    static final String PARAMETER_CLOSE = "</parameter>\n";
    /** llama-server's separator of a block's calls, for a template that writes no tag around each call. */
    static final String CALL_SEPARATOR = ", ";

    /** Whether {@code source} writes these calls: the block tag and its invoke elements. */
    static boolean writtenBy(String source) {
        return source.contains(BLOCK_OPEN) && source.contains("<invoke name=");
    }

    /** The block opens with its tag and a newline, as the template writes it: llama-server reads no block without. */
    @Override
    public String open() {
        return BLOCK_OPEN + "\n";
    }

    @Override
    public List<String> markers() {
        return List.of(BLOCK_OPEN, BLOCK_CLOSE);
    }

    @Override
    public String close() {
        return BLOCK_CLOSE;
    }

    @Override
    public List<AnswerPiece.Call> parse(String body, List<Tool> tools) {
        List<AnswerPiece.Call> calls = new ArrayList<>();
        int at = skipSpace(body, 0);
        while (true) {
            if (!body.startsWith(INVOKE, at)) {
                return null;
            }
            int nameEnd = body.indexOf(INVOKE_NAME_END, at);
            Tool.Function function = nameEnd < 0 ? null
                    : CallJson.offered(tools, body.substring(at + INVOKE.length(), nameEnd));
            if (function == null) {
                return null;
            }
            StringBuilder arguments = new StringBuilder("{");
            at = arguments(body, nameEnd + INVOKE_NAME_END.length(), function, arguments);
            if (at < 0) {
                return null;
            }
            calls.add(new AnswerPiece.Call(function.name(), arguments.append('}').toString()));
            if (body.startsWith(CALL_SEPARATOR + INVOKE, at)) {
                at += CALL_SEPARATOR.length();
                continue;
            }
            at = skipSpace(body, at);
            if (at == body.length()) {
                return calls;
            }
        }
    }

    /**
     * Reads one invoke's parameters from {@code at} through its close tag into {@code arguments}; returns where the
     * invoke ends, or -1 when it breaks the schema's order, names, types or required parameters.
     */
    private static int arguments(String body, int at, Tool.Function function, StringBuilder arguments) {
        Map<?, ?> parameters = function.parameters() == null ? Map.of() : function.parameters();
        Map<?, ?> properties = parameters.get("properties") instanceof Map<?, ?> p ? p : Map.of();
        List<?> requiredList = parameters.get("required") instanceof List<?> r ? r : List.of();
        List<?> required = properties.keySet().stream().filter(requiredList::contains).toList(); // in schema order
        int next = 0; // the required parameter to come
        while (true) {
            int start = skipSpace(body, at);
            int keyEnd = body.startsWith(PARAMETER, start) ? body.indexOf(PARAMETER_NAME_END, start) : -1;
            if (keyEnd < 0) {
                break;
            }
            String key = body.substring(start + PARAMETER.length(), keyEnd);
            boolean inOrder = next < required.size() ? key.equals(required.get(next)) : !required.contains(key);
            if (!inOrder || !(properties.get(key) instanceof Map<?, ?> schema)) {
                return -1;
            }
            next++;
            int valueStart = keyEnd + PARAMETER_NAME_END.length();
            int valueEnd;
            String value;
            if (ArgumentValues.mayBeString(schema)) {
                valueEnd = body.indexOf(PARAMETER_CLOSE, valueStart);
                value = valueEnd < 0 ? null : CallJson.JSON.writeValueAsString(body.substring(valueStart, valueEnd));
            } else {
                ArgumentValues.JsonValue json = ArgumentValues.jsonAt(body.substring(valueStart));
                valueEnd = json == null ? -1 : valueStart + json.end();
                value = valueEnd < 0 || !body.startsWith(PARAMETER_CLOSE, valueEnd) ? null
                        : body.substring(valueStart, valueEnd);
            }
            if (value == null) {
                return -1;
            }
            arguments.append(arguments.length() > 1 ? "," : "").append(CallJson.JSON.writeValueAsString(key)).append(':')
                    .append(value);
            at = valueEnd + PARAMETER_CLOSE.length();
        }
        int close = skipSpace(body, at);
        return next < required.size() || !body.startsWith(INVOKE_CLOSE, close) ? -1 : close + INVOKE_CLOSE.length();
    }

    private static int skipSpace(String text, int at) {
        while (at < text.length() && Character.isWhitespace(text.charAt(at))) {
            at++;
        }
        return at;
    }
}
