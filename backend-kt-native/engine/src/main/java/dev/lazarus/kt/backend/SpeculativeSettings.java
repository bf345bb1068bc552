package dev.lazarus.kt.backend;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendConfigException;
import dev.lazarus.kt.speculative.ModelDrafter;
import dev.lazarus.kt.speculative.NgramDrafter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;

/**
 * Speculative decoding of a {@code kt-native} backend, under llama-server's flag names without the dashes.
 *
 * @param type       {@code spec-type}: what drafts the tokens the model verifies
 * @param draftMax   {@code spec-draft-n-max}: most tokens a draft model proposes per step (default 3)
 * @param draftMin   {@code spec-draft-n-min}: shorter drafts are not verified (default 0)
 * @param ngramSizeN {@code spec-ngram-simple-size-n}: tokens of the n-gram looked up (default 12)
 * @param ngramSizeM {@code spec-ngram-simple-size-m}: most tokens of the continuation drafted (default 48)
 * @param draftModel {@code spec-draft-model}: the draft model's GGUF ({@code draft-simple}), null otherwise
 */
public record SpeculativeSettings(Type type, int draftMax, int draftMin, int ngramSizeN, int ngramSizeM,
                                  Path draftModel) {

    /** The {@code spec-type} values kt-native runs (llama-server's names). */
    public enum Type {
        NONE("none"),
        /** Prompt lookup: the continuation of the last n-gram's previous occurrence ({@link NgramDrafter}). */
        NGRAM_SIMPLE("ngram-simple"),
        /** A small model of the same vocabulary ({@link ModelDrafter}). */
        DRAFT_SIMPLE("draft-simple"),
        /** The model's own NextN (multi-token prediction) block ({@link dev.lazarus.kt.speculative.MtpDrafter}). */
        DRAFT_MTP("draft-mtp");

        private final String settingName;

        Type(String settingName) {
            this.settingName = settingName;
        }

        public String settingName() {
            return settingName;
        }
    }

    public static final SpeculativeSettings NONE = new SpeculativeSettings(Type.NONE, ModelDrafter.DEFAULT_MAX_DRAFT, 0,
            NgramDrafter.DEFAULT_SIZE_N, NgramDrafter.DEFAULT_SIZE_M, null);

    public static SpeculativeSettings from(BackendConfig config) {
        String name = config.string("spec-type", "none").trim().toLowerCase(Locale.ROOT);
        Type type = Arrays.stream(Type.values()).filter(t -> t.settingName.equals(name)).findFirst()
                .orElseThrow(() -> new BackendConfigException(config.id(), "spec-type", "setting 'spec-type' must be "
                        + "none, ngram-simple, draft-simple or draft-mtp, got '" + name + "'"));
        int max = atLeast(config, "spec-draft-n-max", ModelDrafter.DEFAULT_MAX_DRAFT, 1);
        int min = atLeast(config, "spec-draft-n-min", 0, 0);
        int n = atLeast(config, "spec-ngram-simple-size-n", NgramDrafter.DEFAULT_SIZE_N, 1);
        int m = atLeast(config, "spec-ngram-simple-size-m", NgramDrafter.DEFAULT_SIZE_M, 1);
        String model = config.string("spec-draft-model", null);
        if (type == Type.DRAFT_SIMPLE && (model == null || model.isBlank())) {
            throw new BackendConfigException(config.id(), "spec-draft-model", "setting 'spec-type: draft-simple' needs "
                    + "'spec-draft-model', the draft model's GGUF file");
        }
        if (type != Type.DRAFT_SIMPLE && model != null) {
            throw new BackendConfigException(config.id(), "spec-draft-model", "setting 'spec-draft-model' is used by "
                    + "'spec-type: draft-simple' only, not by '" + name + "'");
        }
        Path path = model == null ? null : Path.of(model);
        if (path != null && !Files.isRegularFile(path)) {
            throw new BackendConfigException(config.id(), "spec-draft-model", "draft model file " + path
                    + " does not exist");
        }
        return new SpeculativeSettings(type, max, min, n, m, path);
    }

    private static int atLeast(BackendConfig config, String key, int def, int least) {
        int v = config.integer(key, def);
        if (v < least) {
            throw new BackendConfigException(config.id(), key, "setting '" + key + "' must be at least " + least
                    + ", got " + v);
        }
        return v;
    }
}
