package dev.lazarus.kt.chat;

import dev.lazarus.backend.api.openai.Tool;
import dev.lazarus.kt.chat.ArgumentValues.JsonType;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Qwen3.5's XML calls (also Qwen3-Coder's, Nemotron Nano 3's and StepFun-3.5's), one call per block,
 * <pre>{@code <tool_call>
 * <function=get_weather>
 * <parameter=city>
 * Paris
 * </parameter>
 * </function>
 * </tool_call>}</pre>
 * read as llama-server's parser for them reads it: the function must be one the request offers, each parameter
 * one its schema declares, every required one present. A parameter the schema types only as a string is the raw
 * text up to {@code \n</parameter>\n}; one that cannot be a string must be JSON; one that may be either is the
 * JSON value of an allowed type when it is one, else the raw text. The arguments become one compact JSON object in
 * the order written, each JSON value as the model spelled it.
 */
final class XmlCalls implements ToolCallSyntax.Tagged {

    static final String FUNCTION = "<function=";
    static final String PARAMETER = "<parameter=";
    static final String PARAMETER_CLOSE = "\n</parameter>\n";
    static final String FUNCTION_CLOSE = "</function>\n";

    /**
     * The reasoning block as llama-server's parser for this format reads it, whatever the template renders: all
     * whitespace after either tag dropped, and a call ends the block as {@code </think>} does.
     */
    static final ReasoningSyntax REASONING = new ReasoningSyntax(ReasoningSyntax.ANY_WHITESPACE,
            ReasoningSyntax.ANY_WHITESPACE, HermesCalls.OPEN);

    /**
     * Whether {@code source} writes these calls, as llama-server b11669 decides it: the three markers, but not the
     * templates that write {@code <tool_call><function=} without the newline (it reads those with another parser).
     */
    static boolean writtenBy(String source) {
        return source.contains(HermesCalls.OPEN) && source.contains(FUNCTION) && source.contains(PARAMETER)
                && !source.contains("'<tool_call><function=' ~ tool_call.name ~ '>'");
    }

    @Override
    public String open() {
        return HermesCalls.OPEN;
    }

    @Override
    public List<String> markers() {
        return List.of(HermesCalls.OPEN, HermesCalls.CLOSE);
    }

    @Override
    public String close() {
        return HermesCalls.CLOSE;
    }

    /** llama-server's parser ends the answer with its calls: what follows them is dropped. */
    @Override
    public boolean keepsTextAfterCalls() {
        return false;
    }

    @Override
    public List<AnswerPiece.Call> parse(String body, List<Tool> tools) {
        if (!body.startsWith("\n" + FUNCTION) || !body.endsWith(FUNCTION_CLOSE)) {
            return null;
        }
        int nameEnd = body.indexOf(">\n");
        if (nameEnd < 0) {
            return null;
        }
        Tool.Function function = CallJson.offered(tools, body.substring(1 + FUNCTION.length(), nameEnd));
        if (function == null) {
            return null;
        }
        Map<?, ?> properties = function.parameters() != null && function.parameters().get("properties") instanceof Map<?, ?> p
                ? p : Map.of();
        StringBuilder arguments = new StringBuilder("{");
        Set<String> given = new HashSet<>();
        String rest = body.substring(nameEnd + 2, body.length() - FUNCTION_CLOSE.length());
        while (!rest.isEmpty()) {
            int keyEnd = rest.indexOf(">\n");
            if (!rest.startsWith(PARAMETER) || keyEnd < 0) {
                return null;
            }
            String key = rest.substring(PARAMETER.length(), keyEnd);
            if (!(properties.get(key) instanceof Map<?, ?> schema)) {
                return null;
            }
            String valueAndRest = rest.substring(keyEnd + 2);
            int jsonEnd = valueEnd(valueAndRest, ArgumentValues.types(schema));
            int end = jsonEnd == 0 ? valueAndRest.indexOf(PARAMETER_CLOSE) : jsonEnd;
            if (end < 0) {
                return null;
            }
            String value = jsonEnd == 0 ? CallJson.JSON.writeValueAsString(valueAndRest.substring(0, end)) // the raw text
                    : valueAndRest.substring(0, end);
            arguments.append(arguments.length() > 1 ? "," : "").append(CallJson.JSON.writeValueAsString(key)).append(':')
                    .append(value);
            given.add(key);
            rest = valueAndRest.substring(end + PARAMETER_CLOSE.length());
        }
        if (function.parameters() != null && function.parameters().get("required") instanceof List<?> required
                && !given.containsAll(required)) {
            return null;
        }
        return List.of(new AnswerPiece.Call(function.name(), arguments.append('}').toString()));
    }

    /**
     * Where the JSON value at the start of {@code text} ends when it is one of {@code types} followed by the
     * parameter's close; 0 when the value is to be read as raw text instead; -1 when it is neither.
     */
    private static int valueEnd(String text, Set<JsonType> types) {
        if (types.equals(EnumSet.of(JsonType.STRING))) {
            return 0;
        }
        int end = jsonEnd(text, types);
        if (end > 0 && text.startsWith(PARAMETER_CLOSE, end)) {
            return end;
        }
        return types.contains(JsonType.STRING) ? 0 : -1;
    }

    /** The end of the JSON value of one of {@code types} that {@code text} starts with, or -1. */
    private static int jsonEnd(String text, Set<JsonType> types) {
        ArgumentValues.JsonValue value = ArgumentValues.jsonAt(text);
        // a string parameter reads a quoted string as raw text; a non-string one takes any JSON
        if (value == null || (types.contains(JsonType.STRING) && (value.type() == JsonType.STRING
                || !types.contains(value.type())))) {
            return -1;
        }
        return value.end();
    }
}
