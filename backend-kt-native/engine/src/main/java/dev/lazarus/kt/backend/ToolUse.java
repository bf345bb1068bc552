package dev.lazarus.kt.backend;

import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.Tool;
import dev.lazarus.kt.chat.ToolCallParser;
import dev.lazarus.kt.chat.ToolCallSyntax;
import java.util.List;

/**
 * How a chat request uses tools: the tools the chat template shows the model, how many calls its answer may
 * hold, and whether it must call one. {@code tool_choice} {@code auto} (the default) renders the tools and parses
 * calls, {@code none} does neither, {@code required} constrains the answer to calls with a grammar (see
 * {@link OutputConstraint}). A named function ({@code {"type": "function", "function": {"name": ...}}}) is OpenAI's
 * "call this function now": the answer is constrained to that one call where the template's call format has a
 * grammar, else it is read as {@code auto}, as llama-server (b11669) reads every named choice.
 *
 * @param tools    what the template renders; empty for none
 * @param maxCalls calls parsed from the answer; 0 when it is not parsed at all
 * @param required the answer must be calls
 * @param named    the function a named choice asks for; null otherwise
 */
record ToolUse(List<Tool> tools, int maxCalls, boolean required, Tool named) {

    static final ToolUse NONE = new ToolUse(List.of(), 0, false, null);

    static ToolUse of(ChatCompletionRequest request) {
        List<Tool> tools = request.tools() == null ? List.of() : request.tools();
        for (int i = 0; i < tools.size(); i++) {
            validate(tools.get(i), "tools[" + i + "]");
        }
        Object choice = request.toolChoice();
        if (choice instanceof String s && s.equals("none")) {
            return NONE;
        }
        boolean required = "required".equals(choice);
        if (choice instanceof String s && !required && !s.equals("auto")) {
            throw BackendException.invalidRequest("tool_choice must be 'auto', 'none', 'required' or name a function,"
                    + " got '" + s + "'", "tool_choice");
        }
        Tool named = choice instanceof java.util.Map<?, ?> m ? named(m, tools) : null;
        if (tools.isEmpty()) {
            if (required) {
                throw BackendException.invalidRequest("tool_choice 'required' needs tools", "tool_choice");
            }
            return NONE;
        }
        return new ToolUse(tools, Boolean.FALSE.equals(request.parallelToolCalls()) ? 1 : Integer.MAX_VALUE, required,
                named);
    }

    /** A parser of calls written in {@code syntax}, or null when the answer's calls are not parsed. */
    ToolCallParser parser(ToolCallSyntax syntax) {
        return maxCalls > 0 ? new ToolCallParser(syntax, tools, maxCalls) : null;
    }

    private static void validate(Tool tool, String param) {
        if (tool == null) {
            throw BackendException.invalidRequest(param + " must be an object", param);
        }
        if (tool.type() != null && !tool.type().equals("function")) {
            throw BackendException.invalidRequest(param + ".type must be 'function', got '" + tool.type() + "'",
                    param + ".type");
        }
        if (tool.function() == null || tool.function().name() == null || tool.function().name().isBlank()) {
            throw BackendException.invalidRequest(param + ".function.name is required", param + ".function.name");
        }
    }

    /** The tool that {@code {"type": "function", "function": {"name": ...}}} names; a 400 unless there is one. */
    private static Tool named(java.util.Map<?, ?> choice, List<Tool> tools) {
        Object name = choice.get("function") instanceof java.util.Map<?, ?> f ? f.get("name") : null;
        return tools.stream().filter(t -> t.function().name().equals(name)).findFirst().orElseThrow(() ->
                BackendException.invalidRequest("tool_choice must name one of the tools", "tool_choice"));
    }
}
