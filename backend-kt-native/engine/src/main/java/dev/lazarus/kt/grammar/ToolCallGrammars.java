package dev.lazarus.kt.grammar;

import dev.lazarus.kt.grammar.ChatGrammars.ToolSpec;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The grammars llama-server (b11669) builds for {@code tool_choice: "required"} in the formats it reads with its
 * PEG parsers: Qwen3.5/Qwen3-Coder XML calls, GLM-4.5's key/value calls, DeepSeek-V3/R1's fenced JSON calls and
 * gpt-oss's harmony channels, as it reports them ({@code generation_settings.grammar} with {@code -v}). Each starts
 * with the head of the generation prompt (its root's first literal there too); the backend feeds the grammar the
 * rendered generation prompt from that head on, as llama-server does, so a prompt that opens or closes a reasoning
 * block leaves the grammar where the answer starts.
 */
public final class ToolCallGrammars {

    public static final String QWEN_HEAD = "<|im_start|>assistant\n";
    public static final String GLM_HEAD = "<|assistant|>";
    public static final String DEEPSEEK_HEAD = "<｜Assistant｜>";
    public static final String HARMONY_HEAD = "<|start|>assistant";

    private ToolCallGrammars() {}

    /**
     * Qwen3.5's XML calls: any text without {@code <tool_call>} (a reasoning block included: llama-server's optional
     * block allows no more than that), then call blocks, each {@code <function=NAME>} with the required parameters in
     * any order and then optional ones, any number of times. A parameter that may be a string (or whose schema names
     * no type) is raw text up to {@code \n</parameter>\n}; any other is its schema's JSON. Qwen3-Coder's layout (a
     * template without a reasoning block, {@code coder}) may leave out the first call's {@code <tool_call>}, so
     * the free text may not hold a {@code <function=NAME>} of the tools either.
     */
    public static String xml(List<ToolSpec> tools, boolean parallel, boolean coder) {
        return JsonSchemaGrammar.build(c -> {
            String argString = Until.through(c, "xml-arg-string", "\n</parameter>\n");
            List<String> calls = new ArrayList<>();
            for (int i = 0; i < tools.size(); i++) {
                String tool = "tool-" + i;
                Params params = Params.of(tools.get(i));
                List<String> required = new ArrayList<>();
                List<String> optional = new ArrayList<>();
                for (int j = 0; j < params.names.size(); j++) {
                    String name = params.names.get(j);
                    Object schema = params.schemas.get(j);
                    String arg = tool + "-arg-" + j;
                    Set<String> types = types(schema);
                    String value = types.isEmpty() || types.contains("string") ? argString
                            : "(" + c.schema(schema, arg + "-schema") + ") \"\\n</parameter>\\n\"";
                    c.addRule(arg, "(\"<parameter=\" " + SchemaRules.literal(name) + " \">\\n\") " + value);
                    (params.required.contains(name) ? required : optional).add(arg);
                }
                String args = permutations(c, tool + "-args", required);
                if (!optional.isEmpty()) {
                    args = (args.isEmpty() ? "" : args + " ") + "(" + String.join(" | ", optional) + ")*";
                }
                calls.add(c.addRule(tool, "(\"<function=\" " + SchemaRules.literal(tools.get(i).name()) + " \">\\n\") "
                        + (args.isEmpty() ? "" : "(" + args + ") ") + "\"</function>\\n\""));
            }
            String body = " (" + String.join(" | ", calls) + ") \"</tool_call>\" space";
            c.addRule("tool-call", "\"<tool_call>\\n\"" + body);
            String first = coder ? c.addRule("tool-call-first", "\"<tool_call>\\n\"?" + body) : "tool-call";
            c.addRule("tool-call-root", first + (parallel ? " tool-call*" : ""));
            List<String> opens = new ArrayList<>(List.of("<tool_call>"));
            if (coder) {
                tools.forEach(t -> opens.add("<function=" + t.name() + ">"));
            }
            String until = Until.rules(c, "until", opens);
            c.addRule("root", SchemaRules.literal(QWEN_HEAD) + " space " + until + " space tool-call-root");
        });
    }

    /**
     * GLM-4.5's calls: an optional reasoning block, any text without {@code <tool_call>}, then calls (several with
     * {@code parallel}), each the name, the required arguments in the order declared, then optional ones; a
     * parameter that may be a string is raw text up to {@code </arg_value>}, any other (one naming no type
     * included) its schema's JSON.
     */
    public static String glm(List<ToolSpec> tools, boolean parallel, boolean reasoning) {
        return JsonSchemaGrammar.build(c -> {
            List<String> calls = new ArrayList<>();
            String argString = null;
            for (int i = 0; i < tools.size(); i++) {
                String tool = "tool-" + i;
                Params params = Params.of(tools.get(i));
                StringBuilder rule = new StringBuilder("((\"\" " + SchemaRules.literal(tools.get(i).name()) + " \"\") space)");
                List<String> optional = new ArrayList<>();
                boolean firstRequired = true;
                for (int j = 0; j < params.names.size(); j++) {
                    String name = params.names.get(j);
                    Object schema = params.schemas.get(j);
                    String arg = tool + "-arg-" + j;
                    String value;
                    if (types(schema).contains("string")) {
                        argString = argString != null ? argString : Until.through(c, "arg-string", "</arg_value>");
                        value = argString;
                    } else {
                        value = "(" + c.schema(schema, arg + "-schema") + ") \"</arg_value>\"";
                    }
                    c.addRule(arg, "(\"<arg_key>\" " + SchemaRules.literal(name) + " \"</arg_key>\\n\") \"<arg_value>\" " + value);
                    if (params.required.contains(name)) { // the name's rule ends with a space, the others need one
                        rule.append(firstRequired ? " " : " space ").append(arg);
                        firstRequired = false;
                    } else {
                        optional.add(arg);
                    }
                }
                if (!optional.isEmpty()) {
                    rule.append(" (space (").append(String.join(" | ", optional)).append("))*");
                }
                calls.add(c.addRule(tool, rule.toString()));
            }
            String one = "\"<tool_call>\" space (" + String.join(" | ", calls) + ") space \"</tool_call>\"";
            c.addRule("tool-call", one + (parallel ? " (space " + one + ")*" : "") + " space");
            String until = Until.rules(c, "until", "<tool_call>");
            String think = reasoning ? " (\"<think>\" " + Until.rules(c, "until-think", "</think>") + " \"</think>\" \"\\n\"?)?" : "";
            c.addRule("root", SchemaRules.literal(GLM_HEAD) + " space" + think + " " + until + "? tool-call");
        });
    }

    /**
     * DeepSeek's calls: an optional reasoning block (whatever the template, as llama-server has it), any text without
     * the calls' opening, then one section of calls (several with {@code parallel}): V3/R1's ({@code fenced})
     * {@code function<｜tool▁sep｜>NAME} and the arguments' JSON in a json fence, or V3.1's {@code NAME<｜tool▁sep｜>}
     * and the JSON.
     */
    public static String deepseek(List<ToolSpec> tools, boolean parallel, boolean fenced) {
        return JsonSchemaGrammar.build(c -> {
            List<String> calls = new ArrayList<>();
            for (int i = 0; i < tools.size(); i++) {
                String args = ChatGrammars.arguments(c, tools.get(i), i);
                String name = SchemaRules.literal(tools.get(i).name());
                calls.add(c.addRule("tool-" + i, fenced
                        ? "(\"<｜tool▁sep｜>\" " + name + " \"\\n```json\\n\") space " + args + " space \"```\""
                        : "(\"\" " + name + " \"<｜tool▁sep｜>\") space " + args));
            }
            String one = "\"<｜tool▁call▁begin｜>" + (fenced ? "function" : "") + "\" (" + String.join(" | ", calls)
                    + ") \"<｜tool▁call▁end｜>\"";
            c.addRule("tool-call", one + (parallel ? " (space " + one + ")*" : ""));
            c.addRule("tool-calls", "\"<｜tool▁calls▁begin｜>\" space tool-call space \"<｜tool▁calls▁end｜>\"");
            String until = Until.rules(c, "until", "<｜tool▁calls▁begin｜>");
            String think = " (\"<think>\" " + Until.rules(c, "until-think", "</think>") + " \"</think>\")?";
            c.addRule("root", SchemaRules.literal(DEEPSEEK_HEAD) + " space" + think + " " + until + "? tool-calls");
        });
    }

    /**
     * gpt-oss: any number of finished assistant messages (a commentary preamble or analysis), then one call on the
     * commentary or analysis channel, its recipient before or after the channel, an optional content type, the
     * arguments' JSON. One call whatever {@code parallel_tool_calls} says, as llama-server has it.
     */
    public static String harmony(List<ToolSpec> tools) {
        return JsonSchemaGrammar.build(c -> {
            List<String> calls = new ArrayList<>();
            String channel = "\"<|channel|>\" (\"commentary\" | \"analysis\")";
            String constrain = "(space \"<|constrain|>\"? [A-Za-z0-9_-]+)? \"<|message|>\"";
            for (int i = 0; i < tools.size(); i++) {
                String args = ChatGrammars.arguments(c, tools.get(i), i);
                String to = "\" to=functions.\" " + SchemaRules.literal(tools.get(i).name());
                calls.add(c.addRule("tool-" + i, "(" + to + " " + channel + " " + constrain + ") " + args
                        + " | (" + channel + " " + to + " " + constrain + ") " + args));
            }
            c.addRule("tool-call", String.join(" | ", calls));
            c.addRule("message-content", Until.rules(c, "until", "<|end|>"));
            c.addRule("end", "\"<|end|>\"");
            c.addRule("preamble", "\"<|channel|>commentary<|message|>\" message-content end");
            c.addRule("analysis", "(\"<|channel|>commentary\" \" to=assistant\"?)? \"<|channel|>analysis<|message|>\""
                    + " message-content end");
            c.addRule("any", "preamble | analysis");
            c.addRule("start", SchemaRules.literal(HARMONY_HEAD));
            c.addRule("root", "(start any)* start tool-call");
        });
    }

    /** {@code args} in every order, one rule per remaining set as llama-server's permutation; "" for none. */
    private static String permutations(JsonSchemaGrammar c, String base, List<String> args) {
        if (args.size() <= 1) {
            return args.isEmpty() ? "" : args.getFirst();
        }
        List<String> alternatives = new ArrayList<>();
        for (int k = 0; k < args.size(); k++) {
            List<String> rest = new ArrayList<>(args);
            String first = rest.remove(k);
            alternatives.add(first + " " + permutations(c, base, rest));
        }
        return c.addRule(base + "-" + String.join("-", args), String.join(" | ", alternatives));
    }

    /** A tool's parameters in the order its schema declares them, with the required ones. */
    private record Params(List<String> names, List<Object> schemas, Set<Object> required) {
        static Params of(ToolSpec tool) {
            List<String> names = new ArrayList<>();
            List<Object> schemas = new ArrayList<>();
            Map<?, ?> parameters = tool.parameters() instanceof Map<?, ?> p ? p : Map.of();
            if (parameters.get("properties") instanceof Map<?, ?> properties) {
                properties.forEach((k, v) -> {
                    names.add(String.valueOf(k));
                    schemas.add(v);
                });
            }
            Set<Object> required = parameters.get("required") instanceof List<?> r ? new LinkedHashSet<>(r) : Set.of();
            return new Params(names, schemas, required);
        }
    }

    /**
     * The JSON types a parameter's schema allows, as llama-server reads them: its {@code type}, else those of its
     * {@code const} or {@code enum} values, with those of its {@code anyOf}/{@code oneOf} members; empty when it
     * names none.
     */
    static Set<String> types(Object schema) {
        Set<String> types = new LinkedHashSet<>();
        if (!(schema instanceof Map<?, ?> s)) {
            return types;
        }
        Object type = s.get("type");
        if (type instanceof List<?> list) {
            list.forEach(t -> types.add(String.valueOf(t)));
        } else if (type != null) {
            types.add(String.valueOf(type));
        } else if (s.containsKey("const")) {
            types.add(typeOf(s.get("const")));
        } else if (s.get("enum") instanceof List<?> values) {
            values.forEach(v -> types.add(typeOf(v)));
        }
        for (String union : List.of("anyOf", "oneOf")) {
            if (s.get(union) instanceof List<?> members) {
                members.forEach(m -> types.addAll(types(m)));
            }
        }
        return types;
    }

    private static String typeOf(Object value) {
        return switch (value) {
            case null -> "null";
            case String ignored -> "string";
            case Boolean ignored -> "boolean";
            case Number ignored -> "number";
            case List<?> ignored -> "array";
            default -> "object";
        };
    }
}
