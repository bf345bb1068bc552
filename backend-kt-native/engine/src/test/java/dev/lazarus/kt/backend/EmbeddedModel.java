package dev.lazarus.kt.backend;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.kt.chat.ChatTemplate;
import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.tokenizer.Tokenizer;
import dev.lazarus.kt.tokenizer.Tokenizers;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The embedded default model (the trained lazarus-tiny-moe, a resource of the main classes) for the adapter tests:
 * backends serving it, and its tokenizer and chat template to compute what a response must hold.
 */
final class EmbeddedModel {

    static final String RESOURCE = "models/lazarus-tiny-moe.gguf";
    static final String NAME = "tiny";
    static final Tokenizer TOKENIZER;
    static final ChatTemplate TEMPLATE;

    static {
        try (GgufFile file = GgufFile.open(Path.of(EmbeddedModel.class.getClassLoader().getResource(RESOURCE).toURI()))) {
            TOKENIZER = Tokenizers.fromMetadata(file.metadata());
            TEMPLATE = ChatTemplate.fromMetadata(file.metadata(), TOKENIZER);
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    private EmbeddedModel() {}

    /** A ready backend serving the model as {@value #NAME}, with 2 threads and these settings on top. */
    static KtNativeBackend start(Map<String, Object> settings) throws Exception {
        return ((KtNativeBackend) new KtNativeBackendFactory().create(config(settings)))
                .awaitReady(Duration.ofMinutes(1));
    }

    /** The same, with the tokens of every answer chosen by {@code samplers} (a script) instead of the sampler. */
    static KtNativeBackend start(Map<String, Object> settings, KtNativeBackend.SamplerFactory samplers)
            throws Exception {
        BackendConfig config = config(settings);
        return new KtNativeBackend(config.id(), KtNativeSettings.from(config), samplers)
                .awaitReady(Duration.ofMinutes(1));
    }

    private static BackendConfig config(Map<String, Object> settings) {
        Map<String, Object> all = new HashMap<>(Map.of("model", "classpath:" + RESOURCE, "threads", 2,
                "context-size", 256, "model-name", NAME));
        all.putAll(settings);
        return new BackendConfig("kt", "kt-native", all);
    }

    /**
     * A logit bias that keeps every control token (end of turn, end of text, ChatML markers) from
     * being sampled, so the model writes plain text until a limit ends it.
     */
    static Map<String, Double> noControlTokens() {
        Map<String, Double> bias = new HashMap<>();
        for (int id = 0; id < TOKENIZER.vocabSize(); id++) {
            if (TOKENIZER.isEog(id) || TOKENIZER.tokenBytes(id, false).length == 0) {
                bias.put(String.valueOf(id), -100.0);
            }
        }
        return bias;
    }

    /** How many tokens the chat prompt of these messages has. */
    static int promptTokens(List<ChatMessage> messages) {
        return TOKENIZER.encode(TEMPLATE.render(messages, null, true), true, true).length;
    }

    static String text(List<ChatCompletionChunk> chunks) {
        StringBuilder sb = new StringBuilder();
        chunks.forEach(c -> sb.append(c.contentDelta()));
        return sb.toString();
    }

    /** The finish reason of a chat stream (the chunk before the usage chunk). */
    static String finishReason(List<ChatCompletionChunk> chunks) {
        return chunks.get(chunks.size() - 2).choices().getFirst().finishReason();
    }
}
