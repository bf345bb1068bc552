package dev.lazarus.kt.backend;

import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.Tool;
import dev.lazarus.kt.chat.ToolCallParser;
import dev.lazarus.kt.chat.ToolCallSyntax;
import java.util.List;

/**
 * How a chat request uses tools: the tools the chat template shows the model, and how many calls
 * its answer may hold. {@code tool_choice} {@code auto} (the default) renders the tools and parses
 * calls, {@code none} does neither. {@code required} and a named function are refused: llama-server
 * forces them with a grammar, and this engine does not constrain sampling, so it could not keep
 * the promise.
 *
 * @param tools    what the template renders; empty for none
 * @param maxCalls calls parsed from the answer; 0 when it is not parsed at all
 */
record ToolUse(List<Tool> tools, int maxCalls) {

    static final ToolUse NONE = new ToolUse(List.of(), 0);

    static ToolUse of(ChatCompletionRequest request) {
        List<Tool> tools = request.tools() == null ? List.of() : request.tools();
        for (int i = 0; i < tools.size(); i++) {
            validate(tools.get(i), "tools[" + i + "]");
        }
        Object choice = request.toolChoice();
        if (choice instanceof String s && s.equals("none")) {
            return NONE;
        }
        if (choice != null && !"auto".equals(choice)) {
            throw BackendException.invalidRequest("tool_choice " + describe(choice) + " is not supported by the"
                    + " kt-native backend, which does not constrain generation: use 'auto' or 'none'", "tool_choice");
        }
        if (tools.isEmpty()) {
            return NONE;
        }
        return new ToolUse(tools, Boolean.FALSE.equals(request.parallelToolCalls()) ? 1 : Integer.MAX_VALUE);
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

    private static String describe(Object choice) {
        return choice instanceof String s ? "'" + s + "'" : "naming a function";
    }
}
