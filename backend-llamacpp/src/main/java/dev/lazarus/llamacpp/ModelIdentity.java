package dev.lazarus.llamacpp;

import dev.lazarus.llamacpp.wire.ServerInfo;
import java.util.Locale;
import tools.jackson.databind.JsonNode;

/**
 * Names the model a llama-server serves, so that the gateway can tell when two servers would give the
 * same token ids the same meaning and continue one's interrupted answer on the other from its exact
 * tokens ({@link TokenContinuation}). From the {@code model-identity} setting: a name the operator
 * gives every backend that serves the same GGUF (its SHA-256, say); {@code none} for no token-exact
 * continuation; unset ({@code auto}) for one derived from what the server tells: the model file's
 * name (no directories) and the figures {@code /v1/models} gives of it (vocabulary size and type,
 * parameter count, size in bytes, embedding width, trained context). Two copies of one GGUF agree
 * on all of them; models with another tokenizer never do.
 */
final class ModelIdentity {

    static final String AUTO = "auto";
    static final String NONE = "none";

    private ModelIdentity() {
    }

    /** The configured identity, or null where it is derived ({@code auto}) or off ({@code none}). */
    static String configured(String setting) {
        return setting == null || isAuto(setting) || isNone(setting) ? null : setting.strip();
    }

    static boolean isAuto(String setting) {
        return setting == null || setting.isBlank() || AUTO.equals(setting.strip().toLowerCase(Locale.ROOT));
    }

    static boolean isNone(String setting) {
        return setting != null && NONE.equals(setting.strip().toLowerCase(Locale.ROOT));
    }

    /** The identity derived from {@code /props} and {@code /v1/models}; null when they say too little. */
    static String derived(JsonNode props, JsonNode models) {
        String file = ServerInfo.withoutDirectories(props.path("model_path").asString(""));
        JsonNode meta = models.path("data").path(0).path("meta");
        if (file == null || file.isEmpty() || !meta.path("n_vocab").isIntegralNumber()
                || !meta.path("n_params").isIntegralNumber()) {
            return null;
        }
        return "gguf:" + file
                + ";vocab=" + meta.path("n_vocab").asLong() + "/" + meta.path("vocab_type").asLong(-1)
                + ";params=" + meta.path("n_params").asLong()
                + ";bytes=" + meta.path("size").asLong(-1)
                + ";embd=" + meta.path("n_embd").asLong(-1)
                + ";ctx_train=" + meta.path("n_ctx_train").asLong(-1);
    }
}
