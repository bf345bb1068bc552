package dev.lazarus.kt.chat;

import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.backend.api.openai.MessageContent;
import java.util.List;
import java.util.Map;

/**
 * How a model lays out its answer — a reasoning block or none, and its tool-call syntax — detected
 * from its chat template, as llama-server detects it: the syntax by the markers the template writes
 * calls with, the layout of the reasoning block by rendering a turn with known reasoning and reading
 * what the template puts around it.
 *
 * @param reasoning the reasoning block's layout, or null when the template knows no {@code <think>}
 * @param toolCalls how calls are written
 * @param harmony   whether answers are gpt-oss's channels ({@link HarmonyAnswer}) instead of text,
 *                  thinking and calls
 */
public record ChatFormat(ReasoningSyntax reasoning, ToolCallSyntax toolCalls, boolean harmony) {

    private static final String REASONING_PROBE = "REASONING_PROBE";
    private static final String CONTENT_PROBE = "CONTENT_PROBE";

    /**
     * The marker texts of this format's answers. Where a vocabulary makes them control tokens (gpt-oss's
     * {@code <|channel|>}), generation must write them out for the parser to see them: llama-server does so
     * for a format's "preserved" tokens.
     */
    public List<String> markers() {
        List<String> markers = new java.util.ArrayList<>(toolCalls.markers());
        if (reasoning != null) {
            markers.addAll(List.of(ReasoningSyntax.OPEN, ReasoningSyntax.CLOSE));
        }
        if (harmony) {
            markers.addAll(HarmonyAnswer.MARKERS);
        }
        return markers;
    }

    /** Whether calls are Hermes JSON blocks ({@code <tool_call>{"name": ...}</tool_call>}: Qwen2.5/3, ChatML). */
    public boolean hermesCalls() {
        return toolCalls instanceof HermesCalls;
    }

    /** Whether calls are Qwen3.5/Qwen3-Coder XML blocks ({@code <function=...>}). */
    public boolean xmlCalls() {
        return toolCalls instanceof XmlCalls;
    }

    /** Whether calls are GLM-4.5's ({@code <tool_call>name<arg_key>...}). */
    public boolean glmCalls() {
        return toolCalls instanceof GlmCalls;
    }

    /** Whether calls are DeepSeek-V3/R1's {@code function<｜tool▁sep｜>NAME} with the arguments in a json fence. */
    public boolean deepseekFencedCalls() {
        return toolCalls instanceof DeepSeekCalls d && d.layout() == DeepSeekCalls.Layout.FENCED;
    }

    /** Whether calls are DeepSeek-V3.1's {@code NAME<｜tool▁sep｜>} and the arguments' JSON. */
    public boolean deepseekInlineCalls() {
        return toolCalls instanceof DeepSeekCalls d && d.layout() == DeepSeekCalls.Layout.INLINE;
    }

    /** Whether calls are DeepSeek's as a template that joins the arguments as a string writes them. */
    public boolean deepseekUnreadCalls() {
        return toolCalls instanceof DeepSeekCalls d && d.layout() == DeepSeekCalls.Layout.UNREAD;
    }

    static ChatFormat detect(ChatTemplate template) {
        String source = template.source();
        if (source.contains(HarmonyAnswer.CHANNEL) && source.contains(HarmonyAnswer.MESSAGE)) {
            return new ChatFormat(null, new HermesCalls(), true);
        }
        ToolCallSyntax calls = toolCallSyntax(source);
        if (calls instanceof XmlCalls) { // llama-server's parser of its own for the format, with its own layout
            return new ChatFormat(source.contains(ReasoningSyntax.OPEN) ? XmlCalls.REASONING : null, calls, false);
        }
        ReasoningSyntax reasoning = source.contains(ReasoningSyntax.OPEN) || source.contains(ReasoningSyntax.CLOSE)
                ? reasoningLayout(template) : null;
        return new ChatFormat(reasoning, calls, false);
    }

    static ToolCallSyntax toolCallSyntax(String source) {
        if (DsmlCalls.writtenBy(source)) {
            return new DsmlCalls();
        }
        if (source.contains(DeepSeekCalls.OPEN)) {
            return DeepSeekCalls.of(source);
        }
        if (XmlCalls.writtenBy(source)) {
            return new XmlCalls();
        }
        if (MiniMaxCalls.writtenBy(source)) {
            return new MiniMaxCalls();
        }
        if (source.contains(GlmCalls.KEY_OPEN)) {
            return new GlmCalls();
        }
        if (source.contains(HermesCalls.OPEN)) {
            return new HermesCalls();
        }
        if (source.contains("<|start_header_id|>") && source.contains("\"parameters\"")) {
            return new Llama3Calls();
        }
        return new HermesCalls(); // the ChatML fallback, as the engine's generated models write calls
    }

    /** The newlines the template writes after each tag of a rendered reasoning turn; none when it renders none. */
    private static ReasoningSyntax reasoningLayout(ChatTemplate template) {
        ChatMessage assistant = new ChatMessage("assistant", MessageContent.ofText(CONTENT_PROBE), null, null, null,
                REASONING_PROBE, null);
        String rendered;
        try {
            rendered = template.render(List.of(ChatMessage.user("Hi"), assistant), List.of(), false, Map.of());
        } catch (RuntimeException e) { // a template that cannot render the probe turn: keep every character
            return new ReasoningSyntax(0, 0);
        }
        int probe = rendered.indexOf(REASONING_PROBE);
        int open = probe < 0 ? -1 : rendered.lastIndexOf(ReasoningSyntax.OPEN, probe);
        int close = probe < 0 ? -1 : rendered.indexOf(ReasoningSyntax.CLOSE, probe);
        int content = close < 0 ? -1 : rendered.indexOf(CONTENT_PROBE, close);
        if (open < 0 || content < 0) {
            return new ReasoningSyntax(0, 0);
        }
        return new ReasoningSyntax(newlines(rendered.substring(open + ReasoningSyntax.OPEN.length(), probe)),
                newlines(rendered.substring(close + ReasoningSyntax.CLOSE.length(), content)));
    }

    /** The leading newlines of {@code layout}. */
    private static int newlines(String layout) {
        int n = 0;
        while (n < layout.length() && layout.charAt(n) == '\n') {
            n++;
        }
        return n;
    }
}
