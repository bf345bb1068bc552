package dev.lazarus.kt.backend;

import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.CompletionRequest;
import dev.lazarus.backend.api.openai.ResponseFormat;
import dev.lazarus.backend.api.openai.Tool;
import dev.lazarus.kt.chat.ChatFormat;
import dev.lazarus.kt.grammar.ChatGrammars;
import dev.lazarus.kt.grammar.GrammarException;
import dev.lazarus.kt.grammar.JsonSchemaGrammar;
import dev.lazarus.kt.grammar.ToolCallGrammars;
import java.util.List;
import java.util.Map;

/**
 * What a request constrains its output to, read as llama-server reads it: a GBNF {@code grammar}, a
 * {@code json_schema}, or (chat) a {@code response_format} of type {@code json_object} or {@code json_schema}.
 * A schema becomes GBNF here; a refused one is a 400 naming the field, with the converter's reason. A chat
 * request with {@code tool_choice: "required"} is constrained to the calls of the template's format, and one naming a
 * function to that one call, without text before it (llama-server b11669 reads a named choice as {@code auto}). A
 * schema beside tools is the constraint and the tools are only shown to the model, unless a named choice forces a
 * call first; a {@code grammar} beside tools is a 400.
 *
 * @param gbnf        the grammar the sampler follows; null when the output is free
 * @param jsonContent the chat answer's content is the JSON value inside the grammar's fence and whitespace
 * @param param       the request field the constraint came from, for errors about it
 * @param head        where in the rendered prompt the grammar starts: the grammar is fed the prompt from the last
 *                    occurrence of this text on (the generation prompt), as llama-server feeds it; null for none
 */
record OutputConstraint(String gbnf, boolean jsonContent, String param, String head) {

    /** Llama 3.x calls are bare JSON objects. */
    private static final String LLAMA3_OPEN = "{";
    static final OutputConstraint NONE = new OutputConstraint(null, false, null, null);

    OutputConstraint(String gbnf, boolean jsonContent, String param) {
        this(gbnf, jsonContent, param, null);
    }

    static OutputConstraint of(ChatCompletionRequest r, ToolUse tools, ChatFormat chat) {
        Object schema = r.extra().get("json_schema");
        String grammar = grammarField(r.extra());
        if (schema != null && grammar != null) {
            throw BackendException.invalidRequest("Cannot use both json_schema and grammar", "grammar");
        }
        String param = "json_schema";
        ResponseFormat format = r.responseFormat();
        if (format != null && format.type() != null) {
            switch (format.type()) {
                case "text" -> { }
                case "json_object" -> {
                    schema = Map.of();
                    param = "response_format";
                }
                case "json_schema" -> {
                    Object inner = format.jsonSchema() == null ? null : format.jsonSchema().get("schema");
                    schema = inner == null ? Map.of() : inner;
                    param = "response_format";
                }
                default -> throw BackendException.invalidRequest("response_format type must be one of \"text\" or"
                        + " \"json_object\", but got: " + format.type(), "response_format");
            }
        }
        if (grammar != null && !tools.tools().isEmpty()) {
            throw BackendException.invalidRequest("Cannot use custom grammar constraints with tools.", "grammar");
        }
        if (grammar != null) {
            return new OutputConstraint(grammar, false, "grammar");
        }
        OutputConstraint named = tools.named() == null ? null : namedCall(tools.named(), chat);
        if (named != null) {
            return named;
        }
        // A schema beside tools wins over them, whatever the tool_choice, as llama-server (b11669) has it: the tools
        // stay in the prompt, the answer is the schema's JSON and no calls are read from it
        if (schema != null) {
            return new OutputConstraint(convert(schema, true, param), true, param);
        }
        return tools.required() ? requiredCalls(tools, chat) : NONE;
    }

    /** {@code /v1/completions}: {@code grammar}, else {@code json_schema}; {@code response_format} is not read there. */
    static OutputConstraint of(CompletionRequest r) {
        String grammar = grammarField(r.extra());
        if (grammar != null) {
            return new OutputConstraint(grammar, false, "grammar");
        }
        Object schema = r.extra().get("json_schema");
        return schema == null ? NONE : new OutputConstraint(convert(schema, false, "json_schema"), false, "json_schema");
    }

    private static OutputConstraint requiredCalls(ToolUse tools, ChatFormat format) {
        List<ChatGrammars.ToolSpec> specs = tools.tools().stream()
                .map(t -> new ChatGrammars.ToolSpec(t.function().name(), t.function().parameters())).toList();
        boolean parallel = tools.maxCalls() > 1;
        try {
            if (format.harmony()) {
                return calls(ToolCallGrammars.harmony(specs), ToolCallGrammars.HARMONY_HEAD);
            }
            if (format.xmlCalls()) {
                return calls(ToolCallGrammars.xml(specs, parallel, format.reasoning() == null), ToolCallGrammars.QWEN_HEAD);
            }
            if (format.glmCalls()) {
                return calls(ToolCallGrammars.glm(specs, parallel, format.reasoning() != null), ToolCallGrammars.GLM_HEAD);
            }
            if (format.deepseekFencedCalls() || format.deepseekInlineCalls()) {
                return calls(ToolCallGrammars.deepseek(specs, parallel, format.deepseekFencedCalls()),
                        ToolCallGrammars.DEEPSEEK_HEAD);
            }
            if (format.deepseekUnreadCalls()) {
                throw BackendException.invalidRequest("tool_choice 'required': this DeepSeek template joins a call's"
                        + " arguments to the text as a string, from which llama-server learns a call format its own parser"
                        + " never reads (every call a 500); a template that writes them | tojson (as llama.cpp's own"
                        + " DeepSeek templates do) is constrained", "tool_choice");
            }
            if (format.hermesCalls() && format.reasoning() != null) { // Qwen3
                return calls(ChatGrammars.hermesRequired(specs, parallel, true), ToolCallGrammars.QWEN_HEAD);
            }
            String open = format.toolCalls().open();
            if (format.reasoning() == null && (format.hermesCalls() || LLAMA3_OPEN.equals(open))) {
                return new OutputConstraint(LLAMA3_OPEN.equals(open) ? ChatGrammars.llama3Required(specs, parallel)
                        : ChatGrammars.hermesRequired(specs, parallel), false, "tools");
            }
        } catch (GrammarException e) {
            throw BackendException.invalidRequest(e.getMessage(), "tools");
        }
        throw BackendException.invalidRequest("tool_choice 'required' is supported by the kt-native backend for"
                + " Hermes <tool_call> JSON blocks (Qwen2.5, Qwen3, ChatML), Llama 3.x JSON calls without a reasoning block,"
                + " Qwen3.5/Qwen3-Coder XML calls, GLM-4.5 calls, DeepSeek V3/R1/V3.1 calls and gpt-oss; this model's"
                + " template writes calls otherwise", "tool_choice");
    }

    private static OutputConstraint calls(String gbnf, String head) {
        return new OutputConstraint(gbnf, false, "tools", head);
    }

    /**
     * A named choice's one call where the template writes Hermes or Llama 3.x JSON calls without a reasoning block;
     * else null, and the choice is read as {@code auto}.
     */
    private static OutputConstraint namedCall(Tool tool, ChatFormat format) {
        boolean llama3 = LLAMA3_OPEN.equals(format.toolCalls().open());
        if (format.harmony() || format.reasoning() != null || !(format.hermesCalls() || llama3)) {
            return null;
        }
        ChatGrammars.ToolSpec spec = new ChatGrammars.ToolSpec(tool.function().name(), tool.function().parameters());
        try {
            return new OutputConstraint(llama3 ? ChatGrammars.llama3Named(spec) : ChatGrammars.hermesNamed(spec), false,
                    "tools");
        } catch (GrammarException e) {
            throw BackendException.invalidRequest(e.getMessage(), "tools");
        }
    }

    boolean constrained() {
        return gbnf != null;
    }

    private static String grammarField(Map<String, Object> extra) {
        Object g = extra.get("grammar");
        if (g == null || (g instanceof String s && s.isEmpty())) {
            return null;
        }
        if (!(g instanceof String s)) {
            throw BackendException.invalidRequest("grammar must be a string of GBNF", "grammar");
        }
        return s;
    }

    private static String convert(Object schema, boolean chat, String param) {
        try {
            return chat ? ChatGrammars.responseFormat(schema) : JsonSchemaGrammar.convert(schema);
        } catch (GrammarException e) {
            throw BackendException.invalidRequest("\"json_schema\": " + e.getMessage(), param);
        }
    }
}
