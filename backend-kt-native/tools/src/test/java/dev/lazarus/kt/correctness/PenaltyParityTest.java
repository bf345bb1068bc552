package dev.lazarus.kt.correctness;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.openai.Completion;
import dev.lazarus.backend.api.openai.CompletionRequest;
import dev.lazarus.kt.backend.KtNativeBackend;
import dev.lazarus.kt.backend.KtNativeBackendFactory;
import dev.lazarus.kt.chat.ChatTemplate;
import dev.lazarus.kt.correctness.ParityModels.Format;
import dev.lazarus.kt.correctness.ParityPrompts.Prompt;
import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.testsupport.LlamaCpp;
import dev.lazarus.kt.tokenizer.Tokenizer;
import dev.lazarus.kt.tokenizer.Tokenizers;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Greedy decoding with repetition penalties gives llama-server's tokens: the backend (a legacy completion of
 * token ids, through the scheduler and the {@link dev.lazarus.kt.sampling.Sampler}) against llama-server's
 * {@code /completion} with the chain logit bias → penalties → top-1, on the generated F32 llama model whose
 * plain greedy continuations {@link GreedyParityTest} shows identical. Both look back on the same window: the
 * last {@code repeat_last_n} tokens of prompt and answer.
 */
@Tag("llama-server")
class PenaltyParityTest {

    static final int TOKENS = 48;

    /** The penalty fields of one comparison, as both servers read them. */
    record Setting(String name, Map<String, Object> fields) {
        @Override
        public String toString() {
            return name;
        }
    }

    static final List<Setting> SETTINGS = List.of(
            new Setting("frequency 1.0, default window", Map.of("frequency_penalty", 1.0)),
            new Setting("all three over 16 tokens", Map.of("frequency_penalty", 0.5, "presence_penalty", 0.3,
                    "repeat_penalty", 1.3, "repeat_last_n", 16)),
            // llama-server's request parser (b11669) refuses -1 (context size), which only its command line takes
            new Setting("presence over 200 tokens", Map.of("presence_penalty", 1.5, "repeat_last_n", 200)));

    @TempDir
    static Path dir;

    static Path model;
    static Tokenizer tokenizer;
    static ChatTemplate template;
    static KtNativeBackend backend;
    static LlamaReference llama;

    @BeforeAll
    static void start() throws Exception {
        LlamaCpp.require();
        model = ParityModels.LLAMA.write(Format.F32, dir);
        try (GgufFile file = GgufFile.open(model)) {
            tokenizer = Tokenizers.fromMetadata(file.metadata());
            template = ChatTemplate.fromMetadata(file.metadata(), tokenizer);
        }
        backend = ((KtNativeBackend) new KtNativeBackendFactory().create(new BackendConfig("kt", "kt-native",
                Map.of("model", model.toString(), "threads", 1, "context-size", 1024, "model-name", "m",
                        "flash-attention", "off"))))
                .awaitReady(Duration.ofMinutes(1));
        llama = LlamaReference.start(model);
    }

    @AfterAll
    static void stop() {
        if (backend != null) {
            backend.close();
        }
        if (llama != null) {
            llama.close();
        }
    }

    @Test
    void penalisedGreedyContinuationsMatchLlamaServer() {
        List<String> failures = new ArrayList<>();
        int changedByPenalties = 0;
        List<Prompt> prompts = ParityPrompts.all(template).subList(0, 4);
        for (Prompt prompt : prompts) {
            int[] ids = tokenizer.encode(prompt.text(), true, true);
            String plain = ours(ids, Map.of());
            for (Setting setting : SETTINGS) {
                String theirs = theirs(ids, setting.fields());
                String ours = ours(ids, setting.fields());
                if (!ours.equals(theirs)) {
                    failures.add("%s, %s:%n  engine       %s%n  llama-server %s".formatted(prompt, setting,
                            ours.replace("\n", "\\n"), theirs.replace("\n", "\\n")));
                }
                changedByPenalties += ours.equals(plain) ? 0 : 1;
            }
        }
        assertThat(failures).as("penalised greedy continuations against llama-server").isEmpty();
        assertThat(changedByPenalties).as("runs the penalties changed (else this compares plain greedy)")
                .isGreaterThan(SETTINGS.size() * prompts.size() / 2);
    }

    /** The backend's continuation, end-of-generation tokens biased away (llama-server's {@code ignore_eos}). */
    private static String ours(int[] prompt, Map<String, Object> penalties) {
        Map<String, Object> extra = new LinkedHashMap<>(penalties);
        Object presence = extra.remove("presence_penalty");
        Object frequency = extra.remove("frequency_penalty");
        Map<String, Double> banned = new HashMap<>();
        for (int id = 0; id < tokenizer.vocabSize(); id++) {
            if (tokenizer.isEog(id)) {
                banned.put(String.valueOf(id), -100.0);
            }
        }
        CompletionRequest request = new CompletionRequest("m", Arrays.stream(prompt).boxed().toList(), null, TOKENS,
                0.0, null, null, null, null, null, null, null, (Double) presence, (Double) frequency, null, banned,
                null, null, extra);
        List<Completion> chunks = backend.completion(request).collectList().block(Duration.ofMinutes(2));
        assertThat(chunks.getLast().usage().completionTokens()).isEqualTo(TOKENS);
        return chunks.stream().filter(c -> !c.choices().isEmpty()).map(c -> c.choices().getFirst().text())
                .collect(Collectors.joining());
    }

    /**
     * llama-server's continuation: the sampler chain penalties → top-k 1 (the logit bias of {@code ignore_eos}
     * comes first in every chain), at temperature 1 so no greedy shortcut can skip the chain.
     */
    private static String theirs(int[] prompt, Map<String, Object> penalties) {
        ObjectNode request = LlamaReference.JSON.createObjectNode();
        var ids = request.putArray("prompt");
        Arrays.stream(prompt).forEach(ids::add);
        request.put("n_predict", TOKENS).put("temperature", 1.0).put("top_k", 1).put("ignore_eos", true)
                .put("cache_prompt", false).put("return_tokens", true);
        request.putArray("samplers").add("penalties").add("top_k");
        penalties.forEach((k, v) -> {
            if (v instanceof Integer i) {
                request.put(k, i);
            } else {
                request.put(k, (Double) v);
            }
        });
        JsonNode response = LlamaReference.JSON.readTree(llama.server().post("/completion",
                LlamaReference.JSON.writeValueAsString(request)));
        int[] tokens = response.path("tokens").valueStream().mapToInt(JsonNode::asInt).toArray();
        assertThat(tokens).as("llama-server's tokens").hasSize(TOKENS);
        JsonNode settings = response.path("generation_settings");
        assertThat(settings.path("repeat_last_n").asInt()).as("llama-server read repeat_last_n")
                .isEqualTo(penalties.getOrDefault("repeat_last_n", 64));
        return tokenizer.decode(tokens);
    }
}
