package dev.lazarus.backend.api.openai;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Folds a chunk stream into the non-streaming {@link ChatCompletion}: content, reasoning and
 * logprobs appended per choice, tool-call fragments merged by their {@code index}, the last
 * {@code finish_reason} and {@code usage} kept. Not thread-safe; one per response.
 */
public final class ChatCompletionAggregator {

    private String id;
    private long created;
    private String model;
    private String systemFingerprint;
    private Usage usage;
    private final Map<Integer, ChoiceState> choices = new TreeMap<>();

    public ChatCompletionAggregator add(ChatCompletionChunk chunk) {
        if (id == null) {
            id = chunk.id();
            created = chunk.created();
            model = chunk.model();
        }
        if (chunk.systemFingerprint() != null) {
            systemFingerprint = chunk.systemFingerprint();
        }
        if (chunk.usage() != null) {
            usage = chunk.usage();
        }
        if (chunk.choices() != null) {
            for (ChatCompletionChunk.Choice c : chunk.choices()) {
                choices.computeIfAbsent(c.index(), i -> new ChoiceState()).add(c);
            }
        }
        return this;
    }

    public ChatCompletion result() {
        List<ChatCompletion.Choice> out = new ArrayList<>();
        choices.forEach((index, state) -> out.add(state.toChoice(index)));
        if (out.isEmpty()) {
            out.add(new ChoiceState().toChoice(0));
        }
        return new ChatCompletion(id, ChatCompletion.OBJECT, created, model, systemFingerprint, out, usage, null);
    }

    private static final class ChoiceState {
        private String role = "assistant";
        private final StringBuilder content = new StringBuilder();
        private final StringBuilder reasoning = new StringBuilder();
        private final Map<Integer, ToolCallState> toolCalls = new TreeMap<>();
        private List<Logprobs.TokenLogprob> logprobs;
        private String finishReason;

        void add(ChatCompletionChunk.Choice c) {
            ChatCompletionChunk.Delta d = c.delta();
            if (d != null) {
                if (d.role() != null) {
                    role = d.role();
                }
                if (d.content() != null) {
                    content.append(d.content());
                }
                if (d.reasoningContent() != null) {
                    reasoning.append(d.reasoningContent());
                }
                if (d.toolCalls() != null) {
                    int fallback = toolCalls.size();
                    for (ToolCall t : d.toolCalls()) {
                        int index = t.index() != null ? t.index() : fallback++;
                        toolCalls.computeIfAbsent(index, i -> new ToolCallState()).add(t);
                    }
                }
            }
            if (c.logprobs() != null && c.logprobs().content() != null) {
                if (logprobs == null) {
                    logprobs = new ArrayList<>();
                }
                logprobs.addAll(c.logprobs().content());
            }
            if (c.finishReason() != null) {
                finishReason = c.finishReason();
            }
        }

        ChatCompletion.Choice toChoice(int index) {
            List<ToolCall> calls = null;
            if (!toolCalls.isEmpty()) {
                calls = toolCalls.values().stream().map(ToolCallState::toToolCall).toList();
            }
            // OpenAI sends content null (not "") when the answer is only tool calls.
            MessageContent text = calls != null && content.isEmpty() ? null : MessageContent.ofText(content.toString());
            ChatMessage message = new ChatMessage(role, text, null, calls, null,
                    reasoning.isEmpty() ? null : reasoning.toString(), null);
            return new ChatCompletion.Choice(index, message, logprobs == null ? null : new Logprobs(logprobs),
                    finishReason);
        }
    }

    private static final class ToolCallState {
        private String id;
        private String type;
        private String name;
        private final StringBuilder arguments = new StringBuilder();

        void add(ToolCall t) {
            if (t.id() != null) {
                id = t.id();
            }
            if (t.type() != null) {
                type = t.type();
            }
            if (t.function() != null) {
                if (t.function().name() != null) {
                    name = name == null ? t.function().name() : name + t.function().name();
                }
                if (t.function().arguments() != null) {
                    arguments.append(t.function().arguments());
                }
            }
        }

        ToolCall toToolCall() {
            return new ToolCall(null, id, type == null ? "function" : type,
                    new ToolCall.FunctionCall(name, arguments.toString()));
        }
    }
}
