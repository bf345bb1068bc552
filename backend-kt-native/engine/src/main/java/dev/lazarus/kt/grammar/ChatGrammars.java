package dev.lazarus.kt.grammar;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The grammars llama-server (b11669) builds for chat answers of a template without reasoning, after its generation
 * prompt (which it feeds to the grammar first, so these rules start where the answer starts).
 */
public final class ChatGrammars {

    /** What opens a Hermes call block: text before the calls may be anything but this. */
    static final String HERMES_OPEN = "<tool_call>\n";

    private ChatGrammars() {}

    /** A tool the model may call: its name and the JSON schema of its arguments (null: any object). */
    public record ToolSpec(String name, Object parameters) {}

    /**
     * A {@code response_format} (or {@code json_schema}) answer: the value, optionally in a json code fence, with
     * whitespace around it.
     */
    public static String responseFormat(Object schema) {
        Map<String, String> extra = new LinkedHashMap<>();
        extra.put("response-format", "response-format-schema");
        extra.put("root", "space space (\"```json\" space response-format space \"```\" | space response-format space)");
        return JsonSchemaGrammar.convert(schema, "response-format-schema", extra);
    }

    /**
     * {@code tool_choice: "required"} in the Llama 3.1-3.3 format: any text without an opening brace, then a call
     * object {@code {"name": ..., "parameters": ...}} (optionally {@code "type": "function"} first) with the tool's
     * schema; with {@code parallel}, more calls after commas.
     */
    public static String llama3Required(List<ToolSpec> tools, boolean parallel) {
        return llama3(tools, parallel, true);
    }

    /** A named {@code tool_choice} in the Llama 3.x format: the one call alone (llama-server b11669 forces none). */
    public static String llama3Named(ToolSpec tool) {
        return llama3(List.of(tool), false, false);
    }

    private static String llama3(List<ToolSpec> tools, boolean parallel, boolean textFirst) {
        return JsonSchemaGrammar.build(c -> {
            List<String> calls = new ArrayList<>();
            for (int i = 0; i < tools.size(); i++) {
                ToolSpec t = tools.get(i);
                calls.add(c.addRule("tool-" + i, "\"{\" space (\"\\\"type\\\"\" space \":\" space \"\\\"function\\\"\" space"
                        + " \",\" space)? \"\\\"name\\\"\" space \":\" space (\"\\\"\" " + SchemaRules.literal(t.name())
                        + " \"\\\"\") space \",\" space \"\\\"parameters\\\"\" space \":\" space " + arguments(c, t, i)
                        + " space \"}\""));
            }
            String any = "(" + String.join(" | ", calls) + ")";
            c.addRule("tool-call", "\"\" space " + any + (parallel ? " (space \",\" space " + any + ")*" : "") + " space \"\"");
            c.addRule("root", textFirst ? "space " + Until.rules(c, "until", "{") + "? tool-call" : "space tool-call");
        });
    }

    static String arguments(JsonSchemaGrammar c, ToolSpec t, int i) {
        return c.schema(t.parameters() == null ? Map.of("type", "object") : t.parameters(), "tool-" + i + "-schema");
    }

    /**
     * {@code tool_choice: "required"} in the Hermes format (Qwen, ChatML templates): any text without a call
     * opening, then one or more {@code <tool_call>} blocks, each holding one call ({@code parallel} false) or
     * several separated by commas, each call {@code {"name": ..., "arguments": ...}} with the tool's schema.
     */
    public static String hermesRequired(List<ToolSpec> tools, boolean parallel) {
        return hermesRequired(tools, parallel, false);
    }

    /**
     * As {@link #hermesRequired(List, boolean)}; with {@code reasoning} (Qwen3's templates) the grammar starts at
     * {@link ToolCallGrammars#QWEN_HEAD}, as llama-server's does, with an optional reasoning block before the text.
     */
    public static String hermesRequired(List<ToolSpec> tools, boolean parallel, boolean reasoning) {
        return hermes(tools, parallel, true, reasoning);
    }

    /**
     * A named {@code tool_choice} in the Hermes format: one block holding the one call, nothing before it and nothing
     * after (llama-server b11669 forces none).
     */
    public static String hermesNamed(ToolSpec tool) {
        return hermes(List.of(tool), false, false, false);
    }

    private static String hermes(List<ToolSpec> tools, boolean parallel, boolean textFirst, boolean reasoning) {
        return JsonSchemaGrammar.build(c -> {
            List<String> calls = new ArrayList<>();
            for (int i = 0; i < tools.size(); i++) {
                ToolSpec t = tools.get(i);
                String args = arguments(c, t, i);
                calls.add(c.addRule("tool-" + i, "\"{\" space \"\\\"name\\\"\" space \":\" space (\"\\\"\" "
                        + SchemaRules.literal(t.name()) + " \"\\\"\") space \",\" space \"\\\"arguments\\\"\" space \":\""
                        + " space " + args + " space \"}\""));
            }
            String any = "(" + String.join(" | ", calls) + ")";
            c.addRule("tool-call", "\"<tool_call>\\n\" space " + any + (parallel ? " (space \",\" space " + any + ")*" : "")
                    + " space \"</tool_call>\"");
            if (!textFirst) {
                c.addRule("root", "space tool-call");
                return;
            }
            c.addRule("tool-calls", "(tool-call space)+");
            String until = Until.rules(c, "until", HERMES_OPEN);
            if (reasoning) {
                c.addRule("root", SchemaRules.literal(ToolCallGrammars.QWEN_HEAD) + " space (\"<think>\" \"\\n\"? "
                        + Until.rules(c, "until-think", "</think>") + " \"\\n\"? \"</think>\" \"\\n\"? \"\\n\"?)? " + until
                        + "? tool-calls");
            } else {
                c.addRule("root", "space " + until + "? tool-calls");
            }
        });
    }
}
