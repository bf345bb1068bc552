package dev.lazarus.llamacpp;

import java.util.LinkedHashMap;
import java.util.Map;
import tools.jackson.databind.JsonNode;

/**
 * Facts a running llama-server tells about itself through {@code /props} and {@code /v1/models}.
 *
 * @param modelId         the first id {@code /v1/models} lists (the {@code --alias}, else the file name); null if unknown
 * @param contextLength   {@code default_generation_settings.n_ctx}, the context of one slot; 0 if unknown
 * @param modelPath       {@code model_path}; null if unknown
 * @param totalSlots      parallel sequences ({@code --parallel}); 0 if unknown
 * @param hasChatTemplate whether the model ships a chat template
 * @param buildInfo       llama.cpp's build string; null if unknown
 */
public record ServerInfo(String modelId, int contextLength, String modelPath, int totalSlots,
                         boolean hasChatTemplate, String buildInfo) {

    static ServerInfo from(JsonNode props, JsonNode models) {
        JsonNode firstModel = models.path("data").path(0);
        return new ServerInfo(
                text(firstModel.path("id")),
                props.path("default_generation_settings").path("n_ctx").asInt(props.path("n_ctx").asInt(0)),
                text(props.path("model_path")),
                props.path("total_slots").asInt(0),
                !props.path("chat_template").asString("").isEmpty(),
                text(props.path("build_info")));
    }

    /** What is worth showing in {@code /v1/models}. */
    Map<String, Object> metadata() {
        Map<String, Object> m = new LinkedHashMap<>();
        if (modelPath != null) {
            m.put("model_path", modelPath);
        }
        if (totalSlots > 0) {
            m.put("total_slots", totalSlots);
        }
        m.put("chat_template", hasChatTemplate);
        if (buildInfo != null) {
            m.put("llama_cpp_build", buildInfo);
        }
        return m;
    }

    private static String text(JsonNode node) {
        return node.isString() && !node.asString().isEmpty() ? node.asString() : null;
    }
}
