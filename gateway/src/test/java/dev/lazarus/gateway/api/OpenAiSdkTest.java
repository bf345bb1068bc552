package dev.lazarus.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.JsonValue;
import com.openai.core.http.StreamResponse;
import com.openai.errors.NotFoundException;
import com.openai.errors.UnauthorizedException;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import dev.lazarus.gateway.testing.GatewayTestSupport;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The official OpenAI Java SDK as the client of the running gateway. */
class OpenAiSdkTest extends GatewayTestSupport {

    private OpenAIClient sdk(String key) {
        return OpenAIOkHttpClient.builder()
                .baseUrl("http://127.0.0.1:" + port + "/v1")
                .apiKey(key)
                .maxRetries(0)
                .timeout(Duration.ofSeconds(10))
                .build();
    }

    private static ChatCompletionCreateParams.Builder params(String model) {
        return ChatCompletionCreateParams.builder().model(model).addUserMessage("Say hello");
    }

    @Test
    void nonStreaming() {
        ChatCompletion answer = sdk(API_KEY).chat().completions().create(params("test-model").build());
        assertThat(answer.id()).startsWith("chatcmpl-");
        assertThat(answer.model()).isEqualTo("scripted");
        assertThat(answer.choices().getFirst().message().content()).contains("Hello, world");
        assertThat(answer.usage().orElseThrow().completionTokens()).isEqualTo(3);
    }

    @Test
    void streamingWithUsage() {
        ChatCompletionCreateParams request = params("test-model")
                .streamOptions(ChatCompletionStreamOptions.builder().includeUsage(true).build())
                .putAdditionalBodyProperty("script", JsonValue.from(Map.of("*", Map.of("tokens", List.of("a", "b")))))
                .build();
        StringBuilder text = new StringBuilder();
        long usageChunks;
        try (StreamResponse<ChatCompletionChunk> stream = sdk(API_KEY).chat().completions().createStreaming(request)) {
            List<ChatCompletionChunk> chunks = stream.stream().toList();
            chunks.forEach(c -> c.choices().forEach(choice -> choice.delta().content().ifPresent(text::append)));
            usageChunks = chunks.stream().filter(c -> c.usage().isPresent()).count();
            assertThat(chunks.getLast().choices()).isEmpty();
            assertThat(chunks.getLast().usage().orElseThrow().completionTokens()).isEqualTo(2);
        }
        assertThat(text).hasToString("ab");
        assertThat(usageChunks).isEqualTo(1);
    }

    @Test
    void unknownModelIsNotFound() {
        assertThatThrownBy(() -> sdk(API_KEY).chat().completions().create(params("no-such-model").build()))
                .isInstanceOf(NotFoundException.class)
                .hasMessageContaining("no-such-model");
    }

    @Test
    void wrongKeyIsUnauthorized() {
        assertThatThrownBy(() -> sdk("wrong").chat().completions().create(params("test-model").build()))
                .isInstanceOf(UnauthorizedException.class);
    }
}
