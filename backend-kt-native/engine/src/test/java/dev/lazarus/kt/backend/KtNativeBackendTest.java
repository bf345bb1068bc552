package dev.lazarus.kt.backend;

import static dev.lazarus.kt.backend.EmbeddedModel.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendConfigException;
import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.BackendHealth;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The adapter on the embedded default model (generated at build time into target/classes). */
class KtNativeBackendTest {

    static KtNativeBackend backend;

    @BeforeAll
    static void start() throws Exception {
        backend = EmbeddedModel.start(Map.of());
    }

    @AfterAll
    static void stop() {
        backend.close();
    }

    static ChatCompletionRequest request(List<ChatMessage> messages, int maxTokens) {
        return ChatCompletionRequest.builder().model("tiny").messages(messages).maxTokens(maxTokens)
                .temperature(0.0).build();
    }

    @Test
    void factoryIsFoundByServiceLoader() {
        assertThat(ServiceLoader.load(dev.lazarus.backend.api.BackendFactory.class).stream()
                .map(p -> p.get().kind())).contains("kt-native");
    }

    @Test
    void missingModelSettingIsAConfigError() {
        assertThatThrownBy(() -> new KtNativeBackendFactory().create(new BackendConfig("x", "kt-native", Map.of())))
                .isInstanceOf(BackendConfigException.class).hasMessageContaining("model");
    }

    @Test
    void describesTheModel() throws Exception {
        var model = backend.describe().models().getFirst();
        assertThat(model.id()).isEqualTo("tiny");
        assertThat(model.metadata()).containsEntry("architecture", "qwen3moe")
                .containsEntry("quantization", "F16").containsEntry("trained_context_length", 2048);
        assertThat(model.metadata()).as("llama-server's default KV cache, and what a token of it takes")
                .containsEntry("cache_type_k", "f16").containsEntry("cache_type_v", "f16");
        assertThat((Long) model.metadata().get("kv_bytes_per_token")).isPositive().isEven();
        assertThat(model.metadata()).as("the embedded default is trained").doesNotContainKey("random_weights");
        assertThat(model.metadata()).as("where and how it runs, for the gateway's start-up line")
                .containsEntry("device", "cpu");
        assertThat(model.metadata()).as("the tiny model's experts copied into the RAM tier (cpu-experts: auto)")
                .containsEntry("cpu_experts", "ram");
        assertThat((String) model.metadata().get("kernels")).as("F16 weights run on the Java kernels, native ones loaded or not")
                .matches("java-vector-(128|256|512): F32,F16");
        assertThat(model.contextLength()).as("the context this backend serves").isEqualTo(256);
        long fileBytes = java.nio.file.Files.size(java.nio.file.Path.of(
                Thread.currentThread().getContextClassLoader().getResource(EmbeddedModel.RESOURCE).toURI()));
        assertThat(model.sizeBytes()).as("the preflight's memory wall reads it").hasValue(fileBytes);
        assertThat(backend.describe().capabilities().assistantPrefill()).isTrue();
        assertThat(backend.health().block().status()).isEqualTo(BackendHealth.Status.UP);
    }

    @Test
    void chatStreamsRoleThenDeltasThenFinishThenUsage() {
        List<ChatCompletionChunk> chunks = backend.chat(request(List.of(ChatMessage.user("Hello there")), 12))
                .collectList().block(Duration.ofMinutes(1));
        assertThat(chunks.getFirst().choices().getFirst().delta().role()).isEqualTo("assistant");
        ChatCompletionChunk usage = chunks.getLast();
        assertThat(usage.choices()).isEmpty();
        assertThat(usage.usage().completionTokens()).isBetween(1, 12);
        assertThat(usage.usage().promptTokens()).isGreaterThan(3);
        ChatCompletionChunk finish = chunks.get(chunks.size() - 2);
        assertThat(finish.choices().getFirst().finishReason()).isIn("stop", "length");
        for (ChatCompletionChunk c : chunks.subList(1, chunks.size() - 2)) {
            assertThat(c.choices().getFirst().finishReason()).isNull();
            assertThat(c.contentDelta()).isNotEmpty();
        }
    }

    @Test
    void toolsAreRenderedIntoThePrompt() throws Exception {
        List<ChatMessage> messages = List.of(ChatMessage.user("Hi"));
        var tool = new dev.lazarus.backend.api.openai.Tool("function",
                new dev.lazarus.backend.api.openai.Tool.Function("get_time", "Time now", Map.of("type", "object"), null));
        // The tools section is long in this byte-level vocabulary: more context than the shared backend has.
        KtNativeBackend roomy = EmbeddedModel.start(Map.of("context-size", 1024));
        try {
            int without = promptTokens(roomy, request(messages, 1));
            int with = promptTokens(roomy, request(messages, 1).toBuilder().tools(List.of(tool)).build());
            assertThat(with).as("the template's tools section is part of the prompt").isGreaterThan(without + 10);
        } finally {
            roomy.close();
        }
    }

    /** A prompt longer than one prefill step (512 tokens) tells the caller's PrefillProgress each step before the answer. */
    @Test
    void aLongPromptsPrefillStepsAreToldToTheCallersProgress() throws Exception {
        KtNativeBackend roomy = EmbeddedModel.start(Map.of("context-size", 2048));
        try {
            List<List<Integer>> told = new java.util.concurrent.CopyOnWriteArrayList<>();
            List<ChatMessage> messages = List.of(ChatMessage.user("count ".repeat(600)));
            List<ChatCompletionChunk> chunks = roomy.chat(request(messages, 2))
                    .contextWrite(c -> dev.lazarus.backend.api.CallContext.withPrefillProgress(c,
                            (processed, total) -> told.add(List.of(processed, total))))
                    .collectList().block(Duration.ofMinutes(1));
            int prompt = chunks.getLast().usage().promptTokens();
            assertThat(prompt).isGreaterThan(512);
            assertThat(told).as("one report per step before the last").isNotEmpty()
                    .allSatisfy(t -> assertThat(t.get(1)).isEqualTo(prompt))
                    .allSatisfy(t -> assertThat(t.get(0)).isLessThan(prompt));
            assertThat(told.getFirst().get(0)).isEqualTo(512);
            assertThat(told.size()).isEqualTo((prompt - 1) / 512);
        } finally {
            roomy.close();
        }
    }

    private static int promptTokens(KtNativeBackend b, ChatCompletionRequest r) {
        return b.chat(r).collectList().block(Duration.ofMinutes(1)).getLast().usage().promptTokens();
    }

    @Test
    void greedyChatIsDeterministicAndATrailingAssistantMessageIsContinued() {
        List<ChatMessage> conversation = List.of(ChatMessage.user("Count with me"));
        List<ChatCompletionChunk> first = backend.chat(request(conversation, 10)).collectList()
                .block(Duration.ofMinutes(1));
        String full = text(first);
        assertThat(full).isEqualTo(text(backend.chat(request(conversation, 10)).collectList().block()));
        // The first token's text as an assistant prefix: the model continues it rather than starting a
        // new turn, so prefix + continuation is the same greedy text.
        String prefix = first.get(1).contentDelta();
        List<ChatMessage> prefixed = List.of(conversation.getFirst(), ChatMessage.assistant(prefix));
        String rest = text(backend.chat(request(prefixed, 9)).collectList().block(Duration.ofMinutes(1)));
        assertThat(prefix + rest).isEqualTo(full);
    }

    @Test
    void logprobsAreReportedWhenAsked() {
        ChatCompletionRequest r = request(List.of(ChatMessage.user("Hi")), 3).toBuilder()
                .logprobs(true).topLogprobs(3).build();
        List<ChatCompletionChunk> chunks = backend.chat(r).collectList().block(Duration.ofMinutes(1));
        var entries = chunks.stream().filter(c -> !c.choices().isEmpty())
                .map(c -> c.choices().getFirst().logprobs()).filter(java.util.Objects::nonNull)
                .flatMap(l -> l.content().stream()).toList();
        assertThat(entries).isNotEmpty();
        assertThat(entries.getFirst().topLogprobs()).hasSize(3);
        assertThat(entries.getFirst().logprob()).isLessThanOrEqualTo(0.0)
                .isEqualTo(entries.getFirst().topLogprobs().getFirst().logprob());
    }

    @Test
    void tooLongPromptIsAContextLengthError() {
        String huge = "word ".repeat(400);
        assertThatThrownBy(() -> backend.chat(request(List.of(ChatMessage.user(huge)), 5)).blockLast())
                .isInstanceOfSatisfying(BackendException.class,
                        e -> assertThat(e.kind()).isEqualTo(BackendErrorKind.CONTEXT_LENGTH_EXCEEDED));
    }

    @Test
    void unknownModelNameIsModelNotFound() {
        ChatCompletionRequest r = request(List.of(ChatMessage.user("Hi")), 2).withModel("other");
        assertThatThrownBy(() -> backend.chat(r).blockLast())
                .isInstanceOfSatisfying(BackendException.class,
                        e -> assertThat(e.kind()).isEqualTo(BackendErrorKind.MODEL_NOT_FOUND));
    }
}
