package dev.lazarus.kt.backend;

import static dev.lazarus.kt.backend.EmbeddedModel.finishReason;
import static dev.lazarus.kt.backend.EmbeddedModel.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.backend.api.openai.Logprobs;
import dev.lazarus.backend.api.openai.Usage;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Sampling, stop strings, finish reasons, usage and logprobs of chat requests, through the adapter. */
class KtNativeSamplingTest {

    static final List<ChatMessage> PROMPT = List.of(ChatMessage.user("Tell me a story about a fox"));

    static KtNativeBackend backend;

    @BeforeAll
    static void start() throws Exception {
        backend = EmbeddedModel.start(Map.of());
    }

    @AfterAll
    static void stop() {
        backend.close();
    }

    /** Greedy, plain text only (no control token can end it early), {@code maxTokens} long. */
    static ChatCompletionRequest.Builder plain(int maxTokens) {
        return ChatCompletionRequest.builder().model(EmbeddedModel.NAME).messages(PROMPT).maxTokens(maxTokens)
                .temperature(0.0).logitBias(EmbeddedModel.noControlTokens());
    }

    static List<ChatCompletionChunk> run(ChatCompletionRequest request) {
        return backend.chat(request).collectList().block(Duration.ofMinutes(1));
    }

    static Usage usage(List<ChatCompletionChunk> chunks) {
        return chunks.getLast().usage();
    }

    @Test
    void maxTokensEndsWithLengthAndExactUsage() {
        List<ChatCompletionChunk> chunks = run(plain(7).build());
        assertThat(finishReason(chunks)).isEqualTo("length");
        assertThat(usage(chunks)).isEqualTo(Usage.of(EmbeddedModel.promptTokens(PROMPT), 7));
        assertThat(chunks.getLast().choices()).isEmpty();
    }

    @Test
    void anEndOfTurnTokenEndsWithStopAndIsCounted() {
        // Only <|im_end|> may be sampled (all else biased away): the first token ends the turn.
        int imEnd = EmbeddedModel.TOKENIZER.tokenId("<|im_end|>").orElseThrow();
        List<ChatCompletionChunk> chunks = run(plain(10).logitBias(Map.of(String.valueOf(imEnd), 100.0)).build());
        assertThat(finishReason(chunks)).isEqualTo("stop");
        assertThat(text(chunks)).isEmpty();
        assertThat(usage(chunks).completionTokens()).isEqualTo(1);
    }

    @Test
    void logitBiasSteersEveryToken() {
        int token = EmbeddedModel.TOKENIZER.encode("fox", false, false)[0];
        String piece = EmbeddedModel.TOKENIZER.decode(new int[] {token});
        List<ChatCompletionChunk> chunks = run(plain(5).logitBias(Map.of(String.valueOf(token), 100.0)).build());
        assertThat(text(chunks)).isEqualTo(piece.repeat(5));
    }

    @Test
    void temperatureZeroIsGreedyLikeTopKOne() {
        String greedy = text(run(plain(12).build()));
        String topOne = text(run(plain(12).temperature(1.0).seed(5L).extra("top_k", 1).build()));
        assertThat(topOne).isEqualTo(greedy).isNotEmpty();
    }

    @Test
    void theSameSeedGivesTheSameTextAndSeedsDiffer() {
        UnaryOperator<ChatCompletionRequest.Builder> random = b -> b.temperature(1.5).extra("top_k", 0)
                .extra("min_p", 0.0).topP(1.0);
        String first = text(run(random.apply(plain(16)).seed(1234L).build()));
        String again = text(run(random.apply(plain(16)).seed(1234L).build()));
        assertThat(again).isEqualTo(first);
        Set<String> texts = new HashSet<>();
        for (long seed = 1; seed <= 4; seed++) {
            texts.add(text(run(random.apply(plain(16)).seed(seed).build())));
        }
        assertThat(texts).as("four seeds, hot sampling over the whole vocabulary").hasSizeGreaterThan(1);
    }

    @Test
    void stopStringEndsTheTextBeforeItAndIsNeverSent() {
        String full = text(run(plain(24).build()));
        assertThat(full.length()).isGreaterThan(8);
        String stop = full.substring(4, 8);
        List<ChatCompletionChunk> chunks = run(plain(24).stop(List.of("never-in-this-text", stop)).build());
        assertThat(text(chunks)).isEqualTo(full.substring(0, full.indexOf(stop)));
        assertThat(finishReason(chunks)).isEqualTo("stop");
        assertThat(usage(chunks).completionTokens()).isBetween(1, 24);
    }

    @Test
    void heldBackTextIsSentWhenNoStopStringCompletes() {
        String full = text(run(plain(10).build()));
        // The text's last character followed by something never generated: a possible stop string
        // start is held back at the end, then flushed.
        String stop = full.substring(full.length() - 1) + "\u0000";
        List<ChatCompletionChunk> chunks = run(plain(10).stop(List.of(stop)).build());
        assertThat(text(chunks)).isEqualTo(full);
        assertThat(finishReason(chunks)).isEqualTo("length");
    }

    @Test
    void logprobsCoverEveryTokenOfTheText() {
        List<ChatCompletionChunk> chunks = run(plain(9).logprobs(true).topLogprobs(3).build());
        List<Logprobs.TokenLogprob> entries = logprobs(chunks);
        assertThat(entries).hasSize(usage(chunks).completionTokens()).hasSize(9);
        for (Logprobs.TokenLogprob e : entries) {
            assertThat(e.logprob()).isLessThanOrEqualTo(0.0);
            assertThat(e.topLogprobs()).hasSize(3);
            assertThat(e.topLogprobs().get(0).logprob()).isGreaterThanOrEqualTo(e.topLogprobs().get(1).logprob());
            assertThat(e.bytes()).isNotEmpty();
        }
        assertThat(new String(bytes(entries), StandardCharsets.UTF_8)).isEqualTo(text(chunks));
    }

    @Test
    void logprobsOfTokensInsideAStopStringAreNotSent() {
        String full = text(run(plain(24).build()));
        String stop = full.substring(6, 10);
        List<ChatCompletionChunk> chunks = run(plain(24).stop(List.of(stop)).logprobs(true).build());
        byte[] content = text(chunks).getBytes(StandardCharsets.UTF_8);
        List<Logprobs.TokenLogprob> entries = logprobs(chunks);
        byte[] covered = bytes(entries);
        // every entry's token starts inside the sent text; only the last may reach into the stop string
        assertThat(covered.length).isGreaterThanOrEqualTo(content.length);
        assertThat(covered.length - entries.getLast().bytes().size()).isLessThan(content.length);
        assertThat(new String(covered, 0, content.length, StandardCharsets.UTF_8)).isEqualTo(text(chunks));
        assertThat(entries.getFirst().topLogprobs()).isEmpty();
    }

    static Stream<Arguments> invalidParameters() {
        Map<String, Double> badBias = new HashMap<>(Map.of("not-a-token", 1.0));
        return Stream.of(
                Arguments.of("temperature", plain(4).temperature(2.5)),
                Arguments.of("top_p", plain(4).topP(0.0)),
                Arguments.of("top_k", plain(4).extra("top_k", -1)),
                Arguments.of("min_p", plain(4).extra("min_p", "high")),
                Arguments.of("presence_penalty", plain(4).presencePenalty(3.0)),
                Arguments.of("frequency_penalty", plain(4).frequencyPenalty(-2.5)),
                Arguments.of("logit_bias", plain(4).logitBias(badBias)),
                Arguments.of("logit_bias", plain(4).logitBias(Map.of("5", 300.0))),
                Arguments.of("top_logprobs", plain(4).topLogprobs(2)),
                Arguments.of("top_logprobs", plain(4).logprobs(true).topLogprobs(21)),
                Arguments.of("n", plain(4).n(2)),
                Arguments.of("stop", plain(4).stop(List.of("a", "b", "c", "d", "e"))),
                Arguments.of("max_tokens", plain(0)),
                Arguments.of("max_completion_tokens", plain(4).maxCompletionTokens(-3)),
                Arguments.of("messages", plain(4).messages(List.of())));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("invalidParameters")
    void invalidParametersAreRefusedNamingTheParameter(String param, ChatCompletionRequest.Builder request) {
        var flux = backend.chat(request.build()); // refused on subscription, never thrown by the call
        assertThatThrownBy(flux::blockLast).isInstanceOfSatisfying(BackendException.class, e -> {
            assertThat(e.kind()).isEqualTo(BackendErrorKind.INVALID_REQUEST);
            assertThat(e.param()).isEqualTo(param);
        });
    }

    static List<Logprobs.TokenLogprob> logprobs(List<ChatCompletionChunk> chunks) {
        return chunks.stream().filter(c -> !c.choices().isEmpty()).map(c -> c.choices().getFirst().logprobs())
                .filter(Objects::nonNull).flatMap(l -> l.content().stream()).toList();
    }

    static byte[] bytes(List<Logprobs.TokenLogprob> entries) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        entries.forEach(e -> e.bytes().forEach(out::write));
        return out.toByteArray();
    }
}
