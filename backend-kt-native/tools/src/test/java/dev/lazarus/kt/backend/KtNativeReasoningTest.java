package dev.lazarus.kt.backend;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.openai.ChatCompletion;
import dev.lazarus.backend.api.openai.ChatCompletionAggregator;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.synthetic.SyntheticModels;
import dev.lazarus.kt.tokenizer.Tokenizer;
import dev.lazarus.kt.tokenizer.Tokenizers;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A thinking model end to end: a generated model with Qwen3's template, its answer scripted, the stream
 * split into {@code reasoning_content} and content deltas; {@code chat_template_kwargs.enable_thinking}
 * renders the template's closed block and leaves the answer unsplit; {@code reasoning_format: none}
 * leaves it unsplit too. ChatFormatLlamaServerTest checks the same shapes against llama-server.
 */
class KtNativeReasoningTest {

    static final String THOUGHT = "<think>\nThe user greets.\n</think>\n\nHello!";

    @TempDir
    static Path dir;

    static KtNativeBackend backend;
    static Tokenizer tokenizer;
    static volatile String answer;

    @BeforeAll
    static void start() throws Exception {
        String template;
        try (InputStream in = KtNativeReasoningTest.class.getResourceAsStream("/chat-templates/qwen3.jinja")) {
            template = new String(Objects.requireNonNull(in).readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        Path model = SyntheticModels.write(SyntheticModels.tinyLlama(), dir.resolve("qwen3-template.gguf"), template);
        try (GgufFile file = GgufFile.open(model)) {
            tokenizer = Tokenizers.fromMetadata(file.metadata());
        }
        backend = new KtNativeBackend("kt", KtNativeSettings.from(new BackendConfig("kt", "kt-native",
                Map.of("model", model.toString(), "threads", 2, "context-size", 512, "model-name", "m"))),
                (params, vocab, context) -> new ScriptedSampler(tokenizer, answer, tokenizer.eos()))
                .awaitReady(Duration.ofMinutes(1));
    }

    @AfterAll
    static void stop() {
        backend.close();
    }

    static List<ChatCompletionChunk> run(String scripted, Map<String, Object> extra) {
        answer = scripted;
        ChatCompletionRequest request = ChatCompletionRequest.builder().model("m")
                .messages(List.of(ChatMessage.user("Hi"))).maxTokens(100).build();
        request.extra().putAll(extra);
        return backend.chat(request).collectList().block(Duration.ofMinutes(1));
    }

    static ChatCompletion.Choice aggregate(List<ChatCompletionChunk> chunks) {
        ChatCompletionAggregator aggregator = new ChatCompletionAggregator();
        chunks.forEach(aggregator::add);
        return aggregator.result().choices().getFirst();
    }

    @Test
    void theThinkBlockStreamsAsReasoningContentBeforeTheContent() {
        List<ChatCompletionChunk> chunks = run(THOUGHT, Map.of());
        List<ChatCompletionChunk.Delta> deltas = chunks.stream().filter(c -> !c.choices().isEmpty())
                .map(c -> c.choices().getFirst().delta()).toList();
        int lastReasoning = -1;
        int firstContent = Integer.MAX_VALUE;
        for (int i = 0; i < deltas.size(); i++) {
            if (deltas.get(i).reasoningContent() != null) {
                lastReasoning = i;
            }
            if (deltas.get(i).content() != null && !deltas.get(i).content().isEmpty()) {
                firstContent = Math.min(firstContent, i);
            }
        }
        assertThat(lastReasoning).as("reasoning deltas, all before the content").isBetween(0, firstContent);
        ChatCompletion.Choice choice = aggregate(chunks);
        assertThat(choice.message().reasoningContent()).isEqualTo("The user greets.\n");
        assertThat(choice.message().text()).isEqualTo("Hello!");
        assertThat(choice.finishReason()).isEqualTo("stop");
    }

    @Test
    void enableThinkingFalseRendersTheClosedBlockAndLeavesTheAnswerWhole() {
        List<ChatCompletionChunk> thinking = run(THOUGHT, Map.of());
        List<ChatCompletionChunk> notThinking = run(THOUGHT, Map.of("chat_template_kwargs", Map.of("enable_thinking", false)));
        int closedBlock = tokenizer.encode("<think>\n\n</think>\n\n", false, true).length;
        assertThat(notThinking.getLast().usage().promptTokens())
                .isEqualTo(thinking.getLast().usage().promptTokens() + closedBlock);
        ChatCompletion.Choice choice = aggregate(notThinking);
        assertThat(choice.message().reasoningContent()).isNull();
        assertThat(choice.message().text()).isEqualTo(THOUGHT);
    }

    @Test
    void reasoningFormatNoneLeavesTheThinkingInTheContent() {
        ChatCompletion.Choice choice = aggregate(run(THOUGHT, Map.of("reasoning_format", "none")));
        assertThat(choice.message().reasoningContent()).isNull();
        assertThat(choice.message().text()).isEqualTo(THOUGHT);
    }
}
