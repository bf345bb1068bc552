package dev.lazarus.llamacpp.wire;

import dev.lazarus.backend.api.Redactor;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import tools.jackson.databind.JsonNode;

/**
 * Facts a running llama-server tells about itself through {@code /props} and {@code /v1/models}.
 * {@code /props} also names the model file ({@code model_path}): a path on the server, which is
 * not kept, because these facts are shown to API clients in {@code /v1/models}; the strings that
 * are kept pass the backend's {@link Redactor} (a server that echoes its request headers in
 * {@code build_info} would show its key to every API client).
 *
 * @param modelId         the first id {@code /v1/models} lists (the {@code --alias}, else the model's file name: no directory on the server is shown); null if unknown
 * @param contextLength   {@code default_generation_settings.n_ctx}, the context of one slot; 0 if unknown
 * @param totalSlots      parallel sequences ({@code --parallel}); 0 if unknown
 * @param hasChatTemplate whether the model ships a chat template
 * @param buildInfo       llama.cpp's build string; null if unknown
 * @param model           the model's own figures from {@code /v1/models} {@code meta} (parameters, vocabulary,
 *                        trained context, embedding width, size in bytes), only those that are numbers
 */
public record ServerInfo(String modelId, int contextLength, int totalSlots, boolean hasChatTemplate,
                         String buildInfo, Map<String, Object> model) {

    /** {@code /v1/models} {@code meta} keys worth showing, with the names they are shown under. */
    private static final Map<String, String> MODEL_FACTS = Map.of(
            "n_params", "parameters",
            "n_vocab", "vocab_size",
            "vocab_type", "vocab_type",
            "n_ctx_train", "trained_context_length",
            "n_embd", "embedding_length",
            "size", "size_bytes");

    public ServerInfo {
        model = model == null ? Map.of() : Map.copyOf(model);
    }

    public static ServerInfo from(JsonNode props, JsonNode models, Redactor redactor) {
        JsonNode firstModel = models.path("data").path(0);
        return new ServerInfo(
                redactor.redact(withoutDirectories(text(firstModel.path("id")))),
                props.path("default_generation_settings").path("n_ctx").asInt(props.path("n_ctx").asInt(0)),
                props.path("total_slots").asInt(0),
                !props.path("chat_template").asString("").isEmpty(),
                redactor.redact(text(props.path("build_info"))),
                modelFacts(firstModel.path("meta")));
    }

    /**
     * What another OpenAI-compatible server's {@code /v1/models} says: its first id kept whole (a
     * Hugging Face id such as {@code Qwen/Qwen3-30B-A3B} is the name that server answers to, not a
     * path), and vLLM's {@code max_model_len} as the context length.
     */
    public static ServerInfo fromModelList(JsonNode models, Redactor redactor) {
        JsonNode firstModel = models.path("data").path(0);
        return new ServerInfo(redactor.redact(text(firstModel.path("id"))),
                firstModel.path("max_model_len").asInt(0), 0, false, null, Map.of());
    }

    /** What is worth showing in {@code /v1/models}: nothing that names a place on the server. */
    public Map<String, Object> metadata() {
        Map<String, Object> m = new LinkedHashMap<>(new TreeMap<>(model)); // sorted: the same order on every call;
        if (totalSlots > 0) {
            m.put("total_slots", totalSlots);
        }
        m.put("chat_template", hasChatTemplate);
        if (buildInfo != null) {
            m.put("llama_cpp_build", buildInfo);
        }
        return m;
    }

    private static Map<String, Object> modelFacts(JsonNode meta) {
        Map<String, Object> facts = new LinkedHashMap<>();
        MODEL_FACTS.forEach((key, shownAs) -> {
            JsonNode value = meta.path(key);
            if (value.isIntegralNumber() && value.asLong() >= 0) {
                facts.put(shownAs, value.asLong());
            }
        });
        return facts;
    }

    /** llama-server lists a model without {@code --alias} under the path it was given: show only the file name. */
    public static String withoutDirectories(String id) {
        if (id == null) {
            return null;
        }
        String name = id.substring(Math.max(id.lastIndexOf('/'), id.lastIndexOf('\\')) + 1);
        return name.isEmpty() ? id : name;
    }

    private static String text(JsonNode node) {
        return node.isString() && !node.asString().isEmpty() ? node.asString() : null;
    }
}
