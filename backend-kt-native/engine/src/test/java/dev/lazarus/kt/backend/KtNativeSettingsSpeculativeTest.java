package dev.lazarus.kt.backend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendConfigException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The {@code spec-*} settings: llama-server's speculative flags, its defaults, and what is refused at start-up. */
class KtNativeSettingsSpeculativeTest {

    @TempDir
    Path dir;

    @Test
    void offByDefaultWithLlamaServersDefaults() {
        SpeculativeSettings spec = settings(Map.of()).speculative();
        assertThat(spec).isEqualTo(SpeculativeSettings.NONE);
        assertThat(spec.type()).isEqualTo(SpeculativeSettings.Type.NONE);
        assertThat(spec.draftMax()).isEqualTo(3);
        assertThat(spec.ngramSizeN()).isEqualTo(12);
        assertThat(spec.ngramSizeM()).isEqualTo(48);
    }

    @Test
    void ngramAndDraftModelSettingsAreRead() throws IOException {
        SpeculativeSettings ngram = settings(Map.of("spec-type", "ngram-simple", "spec-ngram-simple-size-n", 4,
                "spec-ngram-simple-size-m", "20", "spec-draft-n-min", 2)).speculative();
        assertThat(ngram).isEqualTo(new SpeculativeSettings(SpeculativeSettings.Type.NGRAM_SIMPLE, 3, 2, 4, 20, null));
        Path draft = Files.writeString(dir.resolve("draft.gguf"), "");
        SpeculativeSettings model = settings(Map.of("spec-type", "Draft-Simple", "spec-draft-model", draft.toString(),
                "spec-draft-n-max", 5)).speculative();
        assertThat(model.type()).isEqualTo(SpeculativeSettings.Type.DRAFT_SIMPLE);
        assertThat(model.draftModel()).isEqualTo(draft);
        assertThat(model.draftMax()).isEqualTo(5);
    }

    @Test
    void mistakesAreRefusedNamingTheSetting() {
        assertThat(settings(Map.of("spec-type", "draft-mtp")).speculative().type())
                .isEqualTo(SpeculativeSettings.Type.DRAFT_MTP);
        assertThatThrownBy(() -> settings(Map.of("spec-type", "draft-eagle3")))
                .isInstanceOf(BackendConfigException.class).hasMessageContaining("spec-type")
                .hasMessageContaining("ngram-simple");
        assertThatThrownBy(() -> settings(Map.of("spec-type", "draft-simple")))
                .isInstanceOf(BackendConfigException.class).hasMessageContaining("spec-draft-model");
        assertThatThrownBy(() -> settings(Map.of("spec-type", "draft-simple", "spec-draft-model", "/no/such.gguf")))
                .isInstanceOf(BackendConfigException.class).hasMessageContaining("does not exist");
        assertThatThrownBy(() -> settings(Map.of("spec-draft-model", "/no/such.gguf")))
                .isInstanceOf(BackendConfigException.class).hasMessageContaining("draft-simple' only");
        assertThatThrownBy(() -> settings(Map.of("spec-type", "ngram-simple", "spec-ngram-simple-size-n", 0)))
                .isInstanceOf(BackendConfigException.class).hasMessageContaining("spec-ngram-simple-size-n");
        assertThatThrownBy(() -> settings(Map.of("spec-draft-n-max", 0)))
                .isInstanceOf(BackendConfigException.class).hasMessageContaining("spec-draft-n-max");
    }

    private static KtNativeSettings settings(Map<String, Object> extra) {
        Map<String, Object> s = new HashMap<>(extra);
        s.put("model", "/models/m.gguf");
        return KtNativeSettings.from(new BackendConfig("kt", "kt-native", s));
    }
}
