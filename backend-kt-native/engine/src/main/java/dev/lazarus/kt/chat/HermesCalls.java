package dev.lazarus.kt.chat;

import dev.lazarus.backend.api.openai.Tool;
import java.util.List;

/** Qwen2.5/Qwen3 and ChatML templates (Hermes 2 Pro's layout): {@code <tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>}. */
final class HermesCalls implements ToolCallSyntax.Tagged {

    static final String OPEN = "<tool_call>";
    static final String CLOSE = "</tool_call>";

    @Override
    public String open() {
        return OPEN;
    }

    @Override
    public List<String> markers() {
        return List.of(OPEN, CLOSE);
    }

    @Override
    public String close() {
        return CLOSE;
    }

    @Override
    public List<AnswerPiece.Call> parse(String body, List<Tool> tools) {
        AnswerPiece.Call call = CallJson.read(body, List.of("arguments"));
        return call == null ? null : List.of(call);
    }
}
