package dev.lazarus.kt.backend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.JsonEndpoint;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.backend.api.openai.CompletionRequest;
import dev.lazarus.kt.synthetic.SpmVocab;
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
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A SentencePiece vocabulary without byte-fallback pieces cannot spell a character that is no piece: llama-server
 * refuses such a prompt (its tokenizer fails looking up the byte), and so does kt-native, with a 400 that names the
 * character instead of llama-server's "unordered_map::at". Text the vocabulary spells gets the same tokens.
 * (Byte-level BPE vocabularies spell every byte; TokenizerParityTest covers them.)
 */
@Tag("llama-server")
class UnknownCharacterLlamaServerTest {

    static final JsonMapper JSON = JsonMapper.builder().build();

    @TempDir
    static Path dir;

    static LlamaServerProcess server;
    static KtNativeBackend backend;

    @BeforeAll
    static void start() throws Exception {
        Path model = SyntheticModels.write(SyntheticModels.oddLlama(), SpmVocab.withoutByteFallback(),
                dir.resolve("no-byte-fallback.gguf"));
        server = LlamaServerProcess.start(model, "-t", "1", "-c", "256", "-fa", "off", "--no-warmup");
        backend = new KtNativeBackend("kt", KtNativeSettings.from(new BackendConfig("kt", "kt-native",
                Map.of("model", model.toString(), "threads", 1, "context-size", 256, "model-name", "m"))))
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

    @Test
    void spelledTextGetsLlamaServersTokens() {
        for (String text : List.of("the dog", "Once upon a time, Lily was happy.", "<unk> x")) {
            JsonNode theirs = JSON.readTree(server.post("/tokenize", JSON.writeValueAsString(Map.of("content", text))));
            Map<String, Object> ours = backend.json(JsonEndpoint.TOKENIZE, Map.of("model", "m", "content", text))
                    .block(Duration.ofMinutes(1));
            assertThat(JSON.valueToTree(ours).path("tokens")).as(text).isEqualTo(theirs.path("tokens"));
        }
    }

    /** "é" and "€" have no piece and no bytes; '@' (ASCII) has no piece of its own either. */
    @Test
    void unknownCharacterIsRefusedAsLlamaServerRefusesIt() throws Exception {
        List<String> failures = new ArrayList<>();
        for (String text : List.of("the café", "10 €", "the @ sign")) {
            HttpResponse<String> theirs = postRaw("/v1/completions", Map.of("prompt", text, "max_tokens", 2));
            JsonNode theirError = JSON.readTree(theirs.body()).path("error");
            Throwable ours = catchThrowable(() -> backend.completion(CompletionRequest.of("m", text, 2)).blockLast());
            String expected = "%d %s".formatted(theirs.statusCode(), theirError.path("type").asString());
            String actual = ours instanceof BackendException e
                    ? "%d %s".formatted(e.kind().httpStatus(), e.kind().type()) : String.valueOf(ours);
            if (!actual.equals(expected) || !(ours instanceof BackendException e && "prompt".equals(e.param()))) {
                failures.add("%s: kt-native %s (%s), llama-server %s".formatted(text, actual, ours, theirs.body()));
            }
        }
        assertThat(failures).isEmpty();
    }

    /**
     * This vocabulary cannot spell the chat template's markup ('<' of ChatML, which both fall back to), so every chat
     * fails: llama-server answers 500 (server_error, "unordered_map::at"); kt-native answers 400, as for any bad
     * input, naming the character.
     */
    @Test
    void unspellableChatIsABadRequest() throws Exception {
        HttpResponse<String> theirs = postRaw("/v1/chat/completions",
                Map.of("messages", List.of(Map.of("role", "user", "content", "hello")), "max_tokens", 2));
        assertThat(theirs.statusCode()).as(theirs.body()).isGreaterThanOrEqualTo(400);
        Throwable ours = catchThrowable(() -> backend.chat(ChatCompletionRequest.builder().model("m")
                .messages(List.of(ChatMessage.user("hello"))).maxTokens(2).build()).blockLast());
        assertThat(ours).isInstanceOfSatisfying(BackendException.class, e -> {
            assertThat(e.kind()).isEqualTo(BackendErrorKind.INVALID_REQUEST);
            assertThat(e.param()).isEqualTo("messages");
            assertThat(e.getMessage()).contains("cannot spell: U+003C '<'");
        });
    }

    static HttpResponse<String> postRaw(String path, Map<String, Object> body) throws Exception {
        try (HttpClient http = HttpClient.newHttpClient()) {
            return http.send(HttpRequest.newBuilder(server.url().resolve(path)).timeout(Duration.ofMinutes(1))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body))).build(),
                    HttpResponse.BodyHandlers.ofString());
        }
    }
}
