package dev.lazarus.kt.backend;

import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.kt.chat.AnswerParser;
import dev.lazarus.kt.chat.ChatFormat;
import dev.lazarus.kt.chat.HarmonyAnswer;
import dev.lazarus.kt.chat.ReasoningParser;
import dev.lazarus.kt.chat.ReasoningSyntax;
import dev.lazarus.kt.chat.ThinkingAnswer;
import dev.lazarus.kt.chat.ToolCallParser;
import dev.lazarus.kt.tokenizer.Tokenizer;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.IntPredicate;

/**
 * The llama-server request fields that shape a chat answer: {@code chat_template_kwargs} (extra template
 * variables such as {@code enable_thinking}) and {@code reasoning_format} ({@code none} leaves the
 * thinking in the content; {@code auto}, the default, and {@code deepseek} split it into
 * {@code reasoning_content}).
 */
final class ChatAnswer {

    private static final Set<String> SPLITTING_FORMATS = Set.of("auto", "deepseek");

    private ChatAnswer() {
    }

    /**
     * The template variables of the request: {@code enable_thinking}, which llama-server always passes (true where
     * the template knows a reasoning block; DeepSeek-V3.1 opens one only when it is set), then the request's
     * {@code chat_template_kwargs}, which override it.
     */
    static Map<String, Object> templateKwargs(ChatCompletionRequest request, ChatFormat format) {
        Object kwargs = request.extra().get("chat_template_kwargs");
        if (kwargs != null && !(kwargs instanceof Map<?, ?>)) {
            throw BackendException.invalidRequest("chat_template_kwargs must be an object", "chat_template_kwargs");
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("enable_thinking", format.reasoning() != null);
        if (kwargs instanceof Map<?, ?> map) {
            map.forEach((k, v) -> out.put(String.valueOf(k), v));
        }
        return out;
    }

    /**
     * The parser of the answer to {@code prompt}, or null when the answer is plain text: no reasoning
     * block in the format (or not split) and no tools.
     */
    static AnswerParser parser(ChatFormat format, String prompt, ToolUse tools, ChatCompletionRequest request) {
        boolean split = splitsReasoning(request); // validated whatever the format
        if (format.harmony()) {
            return split || tools.maxCalls() > 0 ? new HarmonyAnswer(split, tools.maxCalls()) : null;
        }
        ReasoningSyntax.PromptState start = ReasoningSyntax.stateAfter(prompt);
        ReasoningParser reasoning = format.reasoning() != null && split ? new ReasoningParser(format.reasoning(), start) : null;
        // unsplit, the block the prompt opened is text of the answer, as llama-server gives it
        String leading = format.reasoning() != null && !split && start.start() == ReasoningSyntax.Start.INSIDE
                ? ReasoningSyntax.OPEN + start.carried() : "";
        ToolCallParser calls = tools.parser(format.toolCalls());
        return reasoning == null && calls == null && leading.isEmpty() ? null : new ThinkingAnswer(reasoning, calls, leading);
    }

    /**
     * The control tokens of {@code tokenizer} whose text is one of the format's markers: written out while the
     * answer is parsed, as llama-server writes a format's preserved tokens (gpt-oss's channel tokens are control
     * tokens; Qwen3's and DeepSeek's markers are ordinary ones and written anyway).
     */
    static IntPredicate shownControlTokens(ChatFormat format, Tokenizer tokenizer) {
        Set<Integer> ids = new HashSet<>();
        for (String marker : format.markers()) {
            int[] tokens = tokenizer.encode(marker, false, true);
            if (tokens.length == 1 && tokenizer.tokenBytes(tokens[0], false).length == 0) {
                ids.add(tokens[0]);
            }
        }
        return ids::contains;
    }

    private static boolean splitsReasoning(ChatCompletionRequest request) {
        Object format = request.extra().get("reasoning_format");
        if (format == null || format instanceof String s && SPLITTING_FORMATS.contains(s)) {
            return true;
        }
        if ("none".equals(format)) {
            return false;
        }
        throw BackendException.invalidRequest("reasoning_format must be 'auto', 'deepseek' or 'none' on the kt-native"
                + " backend, got " + format, "reasoning_format");
    }
}
