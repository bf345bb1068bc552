package dev.lazarus.gateway.realserver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.http.StreamResponse;
import com.openai.errors.BadRequestException;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import com.openai.models.completions.Completion;
import com.openai.models.completions.CompletionCreateParams;
import dev.lazarus.kt.testsupport.LlamaServerProcess;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The official OpenAI Java SDK, through the gateway, answered by a real llama-server. */
@Tag("llama-server")
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class RealLlamaServerSdkTest {

    static LlamaServerProcess server;

    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) {
        server = RealLlamaServers.start();
        RealLlamaServers.backend(registry, 0, "llama", server.url().toString());
        RealLlamaServers.route(registry, 0, "tiny", "llama");
        registry.add("lazarus.security.api-keys[0]", () -> "sdk-key");
    }

    @AfterAll
    static void stop() {
        RealLlamaServers.stopAll();
    }

    @LocalServerPort
    int port;

    private OpenAIClient sdk() {
        return OpenAIOkHttpClient.builder().baseUrl("http://127.0.0.1:" + port + "/v1").apiKey("sdk-key")
                .maxRetries(0).timeout(Duration.ofSeconds(60)).build();
    }

    private static ChatCompletionCreateParams.Builder chat() {
        return ChatCompletionCreateParams.builder().model("tiny").addUserMessage("Say something about rivers.")
                .maxCompletionTokens(10).temperature(0.0);
    }

    @Test
    void nonStreaming() {
        ChatCompletion answer = sdk().chat().completions().create(chat().build());
        assertThat(answer.id()).startsWith("chatcmpl-");
        assertThat(answer.model()).as("the model llama-server serves").isEqualTo("tiny-llama.gguf");
        assertThat(answer.choices()).hasSize(1);
        assertThat(answer.choices().getFirst().finishReason()).isEqualTo(ChatCompletion.Choice.FinishReason.LENGTH);
        assertThat(answer.usage().orElseThrow().completionTokens()).isEqualTo(10);
    }

    @Test
    void streamingMatchesNonStreamingUnderGreedyDecoding() {
        String expected = sdk().chat().completions().create(chat().build()).choices().getFirst().message().content()
                .orElse("");
        StringBuilder text = new StringBuilder();
        try (StreamResponse<ChatCompletionChunk> stream = sdk().chat().completions().createStreaming(
                chat().streamOptions(ChatCompletionStreamOptions.builder().includeUsage(true).build()).build())) {
            List<ChatCompletionChunk> chunks = stream.stream().toList();
            chunks.forEach(c -> c.choices().forEach(ch -> ch.delta().content().ifPresent(text::append)));
            assertThat(chunks.getLast().usage().orElseThrow().completionTokens()).isEqualTo(10);
            assertThat(chunks.stream().map(ChatCompletionChunk::id).distinct()).hasSize(1);
        }
        assertThat(text).hasToString(expected);
    }

    @Test
    void legacyCompletion() {
        Completion answer = sdk().completions().create(CompletionCreateParams.builder()
                .model("tiny").prompt("The river").maxTokens(6).temperature(0.0).build());
        assertThat(answer.choices()).hasSize(1);
        assertThat(answer.usage().orElseThrow().completionTokens()).isEqualTo(6);
    }

    @Test
    void contextOverflowIsABadRequest() {
        String longText = "rivers run to the sea ".repeat(300);
        assertThatThrownBy(() -> sdk().chat().completions().create(ChatCompletionCreateParams.builder()
                .model("tiny").addUserMessage(longText).maxCompletionTokens(4).build()))
                .isInstanceOfSatisfying(BadRequestException.class,
                        e -> assertThat(e.code()).contains("context_length_exceeded"));
    }
}
