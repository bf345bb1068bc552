package dev.lazarus.kt.chat;

import dev.lazarus.backend.api.openai.Tool;
import java.util.List;

/**
 * Llama 3.1-3.3: a call is a bare JSON object, {@code {"name": ..., "parameters": {...}}} (optionally
 * {@code "type": "function"} first), after any text; {@code <|python_tag|>} before it stays text, as
 * llama-server leaves it. The block is the balanced object that begins at a <code>{</code>.
 */
final class Llama3Calls implements ToolCallSyntax {

    @Override
    public String open() {
        return "{";
    }

    /** Just past the brace that closes the object, strings and escapes skipped; -1 while still open. */
    @Override
    public List<String> markers() {
        return List.of("<|python_tag|>");
    }

    @Override
    public int bodyEnd(CharSequence afterOpen) {
        int depth = 1;
        boolean inString = false;
        for (int i = 0; i < afterOpen.length(); i++) {
            char c = afterOpen.charAt(i);
            if (inString) {
                if (c == '\\') {
                    i++;
                } else if (c == '"') {
                    inString = false;
                }
            } else if (c == '"') {
                inString = true;
            } else if (c == '{') {
                depth++;
            } else if (c == '}' && --depth == 0) {
                return i + 1;
            }
        }
        return -1;
    }

    @Override
    public int closeLength() {
        return 0;
    }

    @Override
    public List<AnswerPiece.Call> parse(String body, List<Tool> tools) {
        AnswerPiece.Call call = CallJson.read("{" + body, List.of("parameters", "arguments"));
        return call == null ? null : List.of(call);
    }
}
