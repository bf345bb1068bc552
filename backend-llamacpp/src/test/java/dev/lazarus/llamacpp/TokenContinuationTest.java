package dev.lazarus.llamacpp;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;

import com.github.tomakehurst.wiremock.WireMockServer;
import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.GeneratedTokens;
import dev.lazarus.backend.api.TokenPrefix;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
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
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Token-exact resume as llama-server sees it: the ids of an answer recorded from its chat stream
 * (and the logprobs asked for them kept from the client), and a continuation sent to
 * {@code /completion} as the rendered, tokenized chat prompt followed by those ids.
 */
class TokenContinuationTest {

    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private static WireMockServer wm;
    private LlamaCppBackend backend;

    @BeforeAll
    static void startWireMock() {
        wm = new WireMockServer(options().bindAddress("127.0.0.1").dynamicPort());
        wm.start();
    }

    @AfterAll
    static void stopWireMock() {
        wm.stop();
    }

    @BeforeEach
    void newBackend() {
        wm.resetAll();
        backend = new LlamaCppBackend(new BackendConfig("wm", "llamacpp", Map.of("url", wm.baseUrl(),
                "model-name", "tiny", "model-identity", "tiny-gguf", "first-token-timeout", "5s")));
    }

    @AfterEach
    void closeBackend() {
        backend.close();
    }

    private static String sse(String... events) {
        StringBuilder body = new StringBuilder();
        for (String event : events) {
            body.append("data: ").append(event).append("\n\n");
        }
        return body.toString();
    }

    /** A chat chunk of one token, as llama-server streams it with n_probs and per-token timings. */
    private static String token(int id, String text, int predicted) {
        return "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + text + "\"},\"finish_reason\":null,"
                + "\"logprobs\":{\"content\":[{\"id\":" + id + ",\"token\":\"" + text + "\",\"bytes\":[],\"prob\":1.0,"
                + "\"top_probs\":[]}]}}],\"object\":\"chat.completion.chunk\",\"created\":1,"
                + "\"timings\":{\"prompt_n\":3,\"cache_n\":0,\"predicted_n\":" + predicted + "}}";
    }

    private List<ChatCompletionChunk> recordedChat(GeneratedTokens record, String... events) {
        wm.stubFor(post(urlEqualTo("/v1/chat/completions")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "text/event-stream").withBody(sse(events))));
        return backend.chat(ChatCompletionRequest.of("tiny", List.of(ChatMessage.user("hi"))))
                .contextWrite(context -> context.put(GeneratedTokens.class, record))
                .collectList().block(WAIT);
    }

    @Test
    void aTokenWithoutItsIdGivesTheRecordUp() {
        GeneratedTokens record = new GeneratedTokens();
        // llama-server held token 2 back (incomplete UTF-8) and sent its text with token 3's id only.
        recordedChat(record, token(41, "a", 1), token(43, "\u00e9b", 3), token(44, "c", 4), "[DONE]");
        assertThat(record.prefix()).isEmpty();
    }

    @Test
    void theAnswersIdsAreRecordedAndTheLogprobsAskedForThemHidden() {
        GeneratedTokens record = new GeneratedTokens();
        List<ChatCompletionChunk> chunks = recordedChat(record, token(41, "Hel", 1), token(42, "lo", 2),
                "{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"object\":\"chat.completion.chunk\",\"created\":1}",
                "{\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2,\"total_tokens\":5},\"object\":\"chat.completion.chunk\",\"created\":1}",
                "[DONE]");

        assertThat(chunks).allSatisfy(c -> c.choices().forEach(choice -> assertThat(choice.logprobs()).isNull()));
        assertThat(record.prefix()).contains(new TokenPrefix("tiny-gguf", List.of(41, 42)));
        JsonNode sent = JSON.readTree(wm.findAll(postRequestedFor(urlEqualTo("/v1/chat/completions"))).getFirst().getBodyAsString());
        assertThat(sent.path("n_probs").asInt()).isEqualTo(1);
        assertThat(sent.path("post_sampling_probs").asBoolean()).isTrue();
    }

    @Test
    void aContinuationOfThisModelGoesOnFromTheIdsThroughCompletion() {
        wm.stubFor(post(urlEqualTo("/apply-template")).willReturn(aResponse().withStatus(200)
                .withBody("{\"prompt\":\"<|user|>hi<|assistant|>\"}")));
        wm.stubFor(post(urlEqualTo("/tokenize")).willReturn(aResponse().withStatus(200)
                .withBody("{\"tokens\":[1,2,3]}")));
        wm.stubFor(post(urlEqualTo("/completion")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "text/event-stream")
                .withBody(sse("{\"index\":0,\"content\":\" wor\",\"tokens\":[43],\"stop\":false,\"tokens_predicted\":1}",
                        "{\"index\":0,\"content\":\"ld\",\"tokens\":[44],\"stop\":false,\"tokens_predicted\":2}",
                        "{\"index\":0,\"content\":\"\",\"tokens\":[],\"stop\":true,\"stop_type\":\"limit\","
                                + "\"tokens_predicted\":2,\"tokens_evaluated\":5,\"timings\":{\"prompt_n\":5}}"))));
        ChatCompletionRequest continuation = ChatCompletionRequest.builder().model("tiny")
                .messages(List.of(ChatMessage.user("hi"), ChatMessage.assistant("Hello"))).maxTokens(2)
                .temperature(0.0).extra("top_k", 1).build();
        GeneratedTokens record = new GeneratedTokens();

        List<ChatCompletionChunk> chunks = backend.chat(continuation)
                .contextWrite(context -> context.put(TokenPrefix.class, new TokenPrefix("tiny-gguf", List.of(41, 42)))
                        .put(GeneratedTokens.class, record))
                .collectList().block(WAIT);

        assertThat(chunks.stream().map(ChatCompletionChunk::contentDelta).reduce("", String::concat)).isEqualTo(" world");
        assertThat(chunks.get(chunks.size() - 2).choices().getFirst().finishReason()).isEqualTo("length");
        assertThat(chunks.getLast().usage().completionTokens()).isEqualTo(2);
        assertThat(chunks.getLast().usage().promptTokens()).isEqualTo(5);
        assertThat(record.prefix()).as("a further cut goes on from all the ids")
                .contains(new TokenPrefix("tiny-gguf", List.of(41, 42, 43, 44)));

        JsonNode template = JSON.readTree(wm.findAll(postRequestedFor(urlEqualTo("/apply-template"))).getFirst().getBodyAsString());
        assertThat(template.path("messages")).hasSize(1);
        JsonNode tokenize = JSON.readTree(wm.findAll(postRequestedFor(urlEqualTo("/tokenize"))).getFirst().getBodyAsString());
        assertThat(tokenize.path("content").asString()).isEqualTo("<|user|>hi<|assistant|>");
        assertThat(tokenize.path("add_special").asBoolean()).isTrue();
        assertThat(tokenize.path("parse_special").asBoolean()).isTrue();
        JsonNode completion = JSON.readTree(wm.findAll(postRequestedFor(urlEqualTo("/completion"))).getFirst().getBodyAsString());
        assertThat(completion.path("prompt").toString()).isEqualTo("[1,2,3,41,42]");
        assertThat(completion.path("n_predict").asInt()).isEqualTo(2);
        assertThat(completion.path("temperature").asDouble()).isZero();
        assertThat(completion.path("top_k").asInt()).isEqualTo(1);
        assertThat(completion.path("return_tokens").asBoolean()).isTrue();
        assertThat(wm.findAll(postRequestedFor(urlEqualTo("/v1/chat/completions")))).isEmpty();
    }

    @Test
    void anotherModelsIdsAreLeftForTheText() {
        wm.stubFor(post(urlEqualTo("/v1/chat/completions")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "text/event-stream")
                .withBody(sse("{\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":0,\"total_tokens\":3},\"object\":\"chat.completion.chunk\",\"created\":1}",
                        "[DONE]"))));
        ChatCompletionRequest continuation = ChatCompletionRequest.of("tiny",
                List.of(ChatMessage.user("hi"), ChatMessage.assistant("Hello")));

        backend.chat(continuation)
                .contextWrite(context -> context.put(TokenPrefix.class, new TokenPrefix("other-gguf", List.of(41, 42))))
                .collectList().block(WAIT);

        assertThat(wm.findAll(postRequestedFor(urlEqualTo("/completion")))).isEmpty();
        JsonNode sent = JSON.readTree(wm.findAll(postRequestedFor(urlEqualTo("/v1/chat/completions"))).getFirst().getBodyAsString());
        assertThat(sent.path("messages").get(1).path("content").asString()).isEqualTo("Hello");
    }
}
