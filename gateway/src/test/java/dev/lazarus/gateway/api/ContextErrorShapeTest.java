package dev.lazarus.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.ContextLengthExceededException;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** A prompt over a backend's context reaches the client in OpenAI's error shape with llama-server's two sizes. */
class ContextErrorShapeTest {

    static final JsonMapper JSON = JsonMapper.builder().build();

    @Test
    void carriesOpenAiFieldsAndLlamaServerSizes() {
        ApiError error = new ErrorMapper(Duration.ofSeconds(1)).map(new ContextLengthExceededException(300, 256, "prompt"),
                MockServerHttpRequest.post("/v1/completions").build());
        assertThat(error.status().value()).isEqualTo(400);
        JsonNode body = JSON.readTree(JSON.writeValueAsString(error.body())).path("error");
        assertThat(body.path("message").asString())
                .isEqualTo("request (300 tokens) exceeds the available context size (256 tokens), try increasing it");
        assertThat(body.path("type").asString()).isEqualTo("exceed_context_size_error");
        assertThat(body.path("code").asString()).isEqualTo("context_length_exceeded");
        assertThat(body.path("param").asString()).isEqualTo("prompt");
        assertThat(body.path("n_prompt_tokens").asInt()).isEqualTo(300);
        assertThat(body.path("n_ctx").asInt()).isEqualTo(256);
    }

    @Test
    void otherErrorsKeepTheFourFieldsOnly() {
        JsonNode body = JSON.readTree(JSON.writeValueAsString(ApiError.invalidRequest("bad", "model").body())).path("error");
        assertThat(body.propertyNames()).containsExactlyInAnyOrder("message", "type", "param", "code");
    }
}
