package dev.lazarus.kt.backend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.ContextLengthExceededException;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.backend.api.openai.Completion;
import dev.lazarus.backend.api.openai.CompletionRequest;
import dev.lazarus.backend.api.openai.StreamOptions;
import dev.lazarus.kt.synthetic.SyntheticModels;
import dev.lazarus.kt.testsupport.LlamaServerProcess;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * At the edge of the context kt-native answers as llama-server does on the same GGUF with the same context size:
 * prompt and completion together fill the context and no more, with the same tokens and finish reason; a prompt
 * that leaves no room is refused with llama-server's error.
 */
@Tag("llama-server")
class ContextLimitLlamaServerTest {

    static final JsonMapper JSON = JsonMapper.builder().build();
    /** llama-server's smallest context (it rounds {@code -c} up to a multiple of 256). */
    static final int CONTEXT = 256;

    @TempDir
    static Path dir;

    static LlamaServerProcess server;
    static KtNativeBackend backend;

    @BeforeAll
    static void start() throws Exception {
        Path model = SyntheticModels.write(SyntheticModels.tinyLlama(), dir.resolve("context.gguf"));
        server = LlamaServerProcess.start(model, "-t", "1", "-c", Integer.toString(CONTEXT), "-fa", "off",
                "--no-warmup");
        backend = new KtNativeBackend("kt", KtNativeSettings.from(new BackendConfig("kt", "kt-native",
                Map.of("model", model.toString(), "threads", 1, "context-size", CONTEXT, "model-name", "m"))))
                .awaitReady(Duration.ofMinutes(1));
    }

    @AfterAll
    static void stop() throws Exception {
        if (backend != null) {
            backend.close();
        }
        if (server != null) {
            server.close();
        }
    }

    /** Greedy up to the end of the context from prompts 3 and 1 tokens short of it. */
    @Test
    void generationStopsWhereLlamaServerStops() {
        List<String> failures = new ArrayList<>();
        for (int promptLength : new int[] {CONTEXT - 3, CONTEXT - 1}) {
            List<Integer> prompt = prompt(promptLength);
            JsonNode theirs = JSON.readTree(server.post("/v1/completions", JSON.writeValueAsString(Map.of(
                    "prompt", prompt, "max_tokens", 20, "temperature", 0, "ignore_eos", true))));
            JsonNode choice = theirs.path("choices").get(0);
            String theirText = choice.path("text").asString();
            String theirFinish = choice.path("finish_reason").asString();
            int theirCount = theirs.path("usage").path("completion_tokens").asInt();
            assertThat(theirFinish).as("llama-server's finish reason").isEqualTo("length");
            assertThat(promptLength + theirCount).as("llama-server fills its context").isEqualTo(CONTEXT);

            List<Completion> chunks = backend.completion(new CompletionRequest("m", prompt, null, 20, 0.0, null, null,
                    true, new StreamOptions(true), null, null, null, null, null, null, null, null, null,
                    Map.of("ignore_eos", true))).collectList().block(Duration.ofMinutes(1));
            StringBuilder ourText = new StringBuilder();
            String ourFinish = null;
            int ourCount = -1;
            for (Completion chunk : chunks) {
                for (Completion.Choice c : chunk.choices()) {
                    ourText.append(c.text() == null ? "" : c.text());
                    ourFinish = c.finishReason() != null ? c.finishReason() : ourFinish;
                }
                if (chunk.usage() != null) {
                    ourCount = chunk.usage().completionTokens();
                }
            }
            String ours = "%d tokens %s, finish %s".formatted(ourCount, JSON.writeValueAsString(ourText.toString()), ourFinish);
            String expected = "%d tokens %s, finish %s".formatted(theirCount, JSON.writeValueAsString(theirText), theirFinish);
            if (!ours.equals(expected)) {
                failures.add("prompt of %d tokens: kt-native %s, llama-server %s".formatted(promptLength, ours, expected));
            }
        }
        assertThat(failures).isEmpty();
    }

    /**
     * A prompt that fills the context, or more, is refused as llama-server refuses it: 400, its error type, message,
     * {@code n_prompt_tokens} and {@code n_ctx}; the parameter named is the endpoint's own.
     */
    @Test
    void tooLongPromptIsRefusedAsLlamaServerRefusesIt() throws Exception {
        for (int promptLength : new int[] {CONTEXT, CONTEXT + 40}) {
            List<Integer> prompt = prompt(promptLength);
            HttpResponse<String> theirs = postRaw("/v1/completions", Map.of("prompt", prompt, "max_tokens", 5));
            Throwable ours = catchThrowable(() -> backend.completion(new CompletionRequest("m", prompt, null, 5, null,
                    null, null, null, null, null, null, null, null, null, null, null, null, null, null)).blockLast());
            assertRefusedAlike(ours, theirs, "prompt");
        }
        String huge = "the quick brown fox jumps over the lazy dog ".repeat(40);
        HttpResponse<String> theirs = postRaw("/v1/chat/completions", Map.of("messages",
                List.of(Map.of("role", "user", "content", huge)), "max_tokens", 5));
        Throwable ours = catchThrowable(() -> backend.chat(ChatCompletionRequest.builder().model("m")
                .messages(List.of(ChatMessage.user(huge))).maxTokens(5).build()).blockLast());
        assertRefusedAlike(ours, theirs, "messages");
    }

    private static void assertRefusedAlike(Throwable ours, HttpResponse<String> theirs, String param) {
        assertThat(theirs.statusCode()).as(theirs.body()).isEqualTo(400);
        JsonNode error = JSON.readTree(theirs.body()).path("error");
        assertThat(ours).isInstanceOfSatisfying(ContextLengthExceededException.class, e -> {
            assertThat(e.kind().httpStatus()).isEqualTo(theirs.statusCode());
            assertThat(e.upstreamType()).isEqualTo(error.path("type").asString()).isEqualTo("exceed_context_size_error");
            assertThat(e.getMessage()).isEqualTo(error.path("message").asString());
            assertThat(e.promptTokens()).isEqualTo(error.path("n_prompt_tokens").asInt());
            assertThat(e.contextSize()).isEqualTo(error.path("n_ctx").asInt()).isEqualTo(CONTEXT);
            assertThat(e.param()).isEqualTo(param);
        });
    }

    /** POST to llama-server, whatever the status. */
    static HttpResponse<String> postRaw(String path, Map<String, Object> body) throws Exception {
        try (HttpClient http = HttpClient.newHttpClient()) {
            return http.send(HttpRequest.newBuilder(server.url().resolve(path)).timeout(Duration.ofMinutes(1))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body))).build(),
                    HttpResponse.BodyHandlers.ofString());
        }
    }

    /** Token ids of ordinary text pieces (no end-of-generation token), {@code length} of them. */
    static List<Integer> prompt(int length) {
        return IntStream.range(0, length).mapToObj(i -> 300 + (i * 7) % 200).toList();
    }
}
