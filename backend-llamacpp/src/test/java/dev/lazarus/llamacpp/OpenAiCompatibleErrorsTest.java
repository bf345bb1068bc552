package dev.lazarus.llamacpp;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.github.tomakehurst.wiremock.WireMockServer;
import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 14, finding 4: the error bodies OpenAI, vLLM and SGLang send, word for word as those servers
 * word them, typed like llama.cpp's. Before, only llama.cpp's "context size" wording was a context
 * overflow: vLLM's "maximum context length" was a plain 400 that no fallback was asked about.
 */
class OpenAiCompatibleErrorsTest {

    private static WireMockServer wm;
    private LlamaCppBackend backend;

    @BeforeAll
    static void start() {
        wm = new WireMockServer(options().bindAddress("127.0.0.1").dynamicPort());
        wm.start();
    }

    @AfterAll
    static void stop() {
        wm.stop();
    }

    @BeforeEach
    void newBackend() {
        wm.resetAll();
        backend = new LlamaCppBackend(new BackendConfig("wm", "llamacpp", Map.of("url", wm.baseUrl(),
                "model-name", "m", "first-token-timeout", "5s", "health-timeout", "2s")));
    }

    @AfterEach
    void close() {
        backend.close();
    }

    private BackendException answer(int status, String body) {
        wm.stubFor(post(urlEqualTo("/v1/chat/completions")).willReturn(aResponse().withStatus(status)
                .withHeader("Content-Type", "application/json").withBody(body)));
        Throwable t = catchThrowable(() -> backend.chat(ChatCompletionRequest.of("m", List.of(ChatMessage.user("hi"))))
                .blockLast(Duration.ofSeconds(10)));
        assertThat(t).isInstanceOf(BackendException.class);
        return (BackendException) t;
    }

    @Test
    void openAiContextLengthExceeded() {
        BackendException e = answer(400, """
                {"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9013 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}""");
        assertThat(e.kind()).isEqualTo(BackendErrorKind.CONTEXT_LENGTH_EXCEEDED);
        assertThat(e.upstreamCode()).isEqualTo("context_length_exceeded");
        assertThat(e.upstreamType()).isEqualTo("invalid_request_error");
        assertThat(e.param()).isEqualTo("messages");
        assertThat(e.getMessage()).contains("maximum context length is 8192");
    }

    @Test
    void vllmContextLengthTopLevelAndWrapped() {
        BackendException old = answer(400, """
                {"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5120 tokens (4096 in the messages, 1024 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}""");
        assertThat(old.kind()).isEqualTo(BackendErrorKind.CONTEXT_LENGTH_EXCEEDED);
        assertThat(old.getMessage()).startsWith("This model's maximum context length is 4096 tokens");
        assertThat(old.upstreamCode()).as("vLLM's code is the status, not a word").isNull();
        assertThat(old.param()).isEqualTo("messages");

        BackendException wrapped = answer(400, """
                {"error":{"message":"'max_tokens' or 'max_completion_tokens' is too large: 2048. This model's maximum context length is 4096 tokens and your request has 3000 input tokens (2048 > 4096 - 3000). None","type":"BadRequestError","param":null,"code":400}}""");
        assertThat(wrapped.kind()).isEqualTo(BackendErrorKind.CONTEXT_LENGTH_EXCEEDED);
    }

    @Test
    void sglangContextLength() {
        BackendException e = answer(400, """
                {"object":"error","message":"The input (5000 tokens) is longer than the model's context length (4096 tokens).","type":"BadRequestError","param":null,"code":400}""");
        assertThat(e.kind()).isEqualTo(BackendErrorKind.CONTEXT_LENGTH_EXCEEDED);
    }

    @Test
    void contentFilterKeepsItsCode() {
        BackendException e = answer(400, """
                {"error":{"message":"Your request was rejected as a result of our safety system. Your prompt may contain text that is not allowed by our safety system.","type":"invalid_request_error","param":null,"code":"content_policy_violation"}}""");
        assertThat(e.kind()).isEqualTo(BackendErrorKind.INVALID_REQUEST);
        assertThat(e.upstreamCode()).isEqualTo("content_policy_violation");
        assertThat(e.upstreamType()).isEqualTo("invalid_request_error");

        BackendException azure = answer(400, """
                {"error":{"message":"The response was filtered due to the prompt triggering Azure OpenAI's content management policy.","type":null,"param":"prompt","code":"content_filter","status":400}}""");
        assertThat(azure.kind()).isEqualTo(BackendErrorKind.INVALID_REQUEST);
        assertThat(azure.upstreamCode()).isEqualTo("content_filter");
        assertThat(azure.param()).isEqualTo("prompt");
    }

    @Test
    void rateLimitIsOverloadedButAnEmptyQuotaIsUnavailable() {
        wm.stubFor(post(urlEqualTo("/v1/chat/completions")).willReturn(aResponse().withStatus(429)
                .withHeader("Retry-After", "2").withBody("""
                {"error":{"message":"Rate limit reached for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Used 29000, Requested 1500. Please try again in 1.0s.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}""")));
        Throwable t = catchThrowable(() -> backend.chat(ChatCompletionRequest.of("m", List.of(ChatMessage.user("hi"))))
                .blockLast(Duration.ofSeconds(10)));
        assertThat(((BackendException) t).kind()).isEqualTo(BackendErrorKind.OVERLOADED);
        assertThat(((BackendException) t).retryAfter()).isEqualTo(Duration.ofSeconds(2));

        BackendException quota = answer(429, """
                {"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}""");
        assertThat(quota.kind()).isEqualTo(BackendErrorKind.UNAVAILABLE);
    }

    @Test
    void authFailuresAreTheBackendsNotTheClients() {
        assertThat(answer(401, """
                {"error":{"message":"Incorrect API key provided: sk-abc***xyz. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}""")
                .kind()).isEqualTo(BackendErrorKind.UNAVAILABLE);
        // vLLM started with --api-key
        assertThat(answer(401, "{\"error\":\"Unauthorized\"}").kind()).isEqualTo(BackendErrorKind.UNAVAILABLE);
    }

    @Test
    void modelNotFound() {
        BackendException openAi = answer(404, """
                {"error":{"message":"The model `gpt-5-turbo` does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}""");
        assertThat(openAi.kind()).isEqualTo(BackendErrorKind.MODEL_NOT_FOUND);
        assertThat(openAi.upstreamCode()).isEqualTo("model_not_found");
        BackendException vllm = answer(404, """
                {"object":"error","message":"The model `gpt-4` does not exist.","type":"NotFoundError","param":null,"code":404}""");
        assertThat(vllm.kind()).isEqualTo(BackendErrorKind.MODEL_NOT_FOUND);
        assertThat(vllm.getMessage()).contains("The model `gpt-4` does not exist.").doesNotContain("\"object\"");
    }

    @Test
    void openAiErrorInsideTheStream() {
        wm.stubFor(post(urlEqualTo("/v1/chat/completions")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "text/event-stream").withBody("""
                        data: {"error":{"message":"This model's maximum context length is 4096 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}

                        """)));
        Throwable t = catchThrowable(() -> backend.chat(ChatCompletionRequest.of("m", List.of(ChatMessage.user("hi"))))
                .blockLast(Duration.ofSeconds(10)));
        assertThat(((BackendException) t).kind()).isEqualTo(BackendErrorKind.CONTEXT_LENGTH_EXCEEDED);
    }
}
