package dev.lazarus.kt.chat;

import dev.lazarus.backend.api.openai.Tool;
import java.util.ArrayList;
import java.util.List;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * DeepSeek-V3.2's DSML: one block of invocations, each argument tagged with whether it is a string,
 * <pre>{@code <｜DSML｜function_calls>
 * <｜DSML｜invoke name="get_weather">
 * <｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>
 * <｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>
 * </｜DSML｜invoke>
 * </｜DSML｜function_calls>}</pre>
 * A string argument is its text as written; any other is the JSON it spells. The arguments become one compact JSON
 * object in the order written, as llama-server's parser builds it. A template is DSML's when it names
 * {@code dsml_token} and writes {@code function_calls} with it (llama-server's detection).
 */
final class DsmlCalls implements ToolCallSyntax.Tagged {

    static final String TOKEN = "｜DSML｜";
    static final String OPEN = "<" + TOKEN + "function_calls>";
    static final String CLOSE = "</" + TOKEN + "function_calls>";
    static final String INVOKE_OPEN = "<" + TOKEN + "invoke name=\"";
    static final String INVOKE_CLOSE = "</" + TOKEN + "invoke>";
    static final String PARAMETER_OPEN = "<" + TOKEN + "parameter name=\"";
    static final String PARAMETER_CLOSE = "</" + TOKEN + "parameter>";

    /** Whether {@code source} is a DeepSeek-V3.2 template, as llama-server decides it. */
    static boolean writtenBy(String source) {
        return source.contains("dsml_token") && source.contains("DSML") && source.contains("function_calls");
    }

    @Override
    public String open() {
        return OPEN;
    }

    @Override
    public List<String> markers() {
        return List.of(TOKEN);
    }

    @Override
    public String close() {
        return CLOSE;
    }

    @Override
    public String separator() {
        return "\n\n";
    }

    @Override
    public List<AnswerPiece.Call> parse(String body, List<Tool> tools) {
        List<AnswerPiece.Call> calls = new ArrayList<>();
        String rest = body.strip();
        while (!rest.isEmpty()) {
            int nameEnd = rest.indexOf("\">");
            int close = rest.indexOf(INVOKE_CLOSE);
            if (!rest.startsWith(INVOKE_OPEN) || nameEnd < 0 || close < nameEnd) {
                return null;
            }
            String name = rest.substring(INVOKE_OPEN.length(), nameEnd);
            ObjectNode arguments = arguments(rest.substring(nameEnd + 2, close));
            if (name.isEmpty() || arguments == null || !offered(tools, name)) {
                return null;
            }
            calls.add(new AnswerPiece.Call(name, CallJson.JSON.writeValueAsString(arguments)));
            rest = rest.substring(close + INVOKE_CLOSE.length()).strip();
        }
        return calls.isEmpty() ? null : calls;
    }

    /** The parameters of one invocation, or null when they are not well formed. */
    private static ObjectNode arguments(String text) {
        ObjectNode arguments = CallJson.JSON.createObjectNode();
        String rest = text.strip();
        while (!rest.isEmpty()) {
            int nameEnd = rest.indexOf('"', PARAMETER_OPEN.length());
            if (!rest.startsWith(PARAMETER_OPEN) || nameEnd < 0) {
                return null;
            }
            String name = rest.substring(PARAMETER_OPEN.length(), nameEnd);
            String after = rest.substring(nameEnd);
            boolean string;
            if (after.startsWith("\" string=\"true\">")) {
                string = true;
            } else if (after.startsWith("\" string=\"false\">")) {
                string = false;
            } else {
                return null;
            }
            String valueAndRest = after.substring(string ? 16 : 17);
            int end = valueAndRest.indexOf(PARAMETER_CLOSE);
            if (end < 0) {
                return null;
            }
            String value = valueAndRest.substring(0, end);
            JsonNode node;
            if (string) {
                node = CallJson.JSON.getNodeFactory().stringNode(value);
            } else if (CallJson.isJson(value)) {
                node = CallJson.JSON.readTree(value);
            } else {
                return null;
            }
            arguments.set(name, node);
            rest = valueAndRest.substring(end + PARAMETER_CLOSE.length()).strip();
        }
        return arguments;
    }

    /** llama-server recognises calls of the request's tools only. */
    private static boolean offered(List<Tool> tools, String name) {
        return tools.stream().anyMatch(t -> t.function() != null && name.equals(t.function().name()));
    }
}
