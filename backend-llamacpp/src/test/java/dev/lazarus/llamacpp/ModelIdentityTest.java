package dev.lazarus.llamacpp;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

class ModelIdentityTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private static JsonNode props(String path) {
        return JSON.readTree("{\"model_path\":\"" + path + "\"}");
    }

    private static JsonNode models(int vocab, long params) {
        return JSON.readTree("{\"data\":[{\"id\":\"x\",\"meta\":{\"vocab_type\":2,\"n_vocab\":" + vocab + ",\"n_params\":"
                + params + ",\"size\":6292480,\"n_embd\":256,\"n_ctx_train\":2048}}]}");
    }

    @Test
    void twoCopiesOfOneGgufAreOneModel() {
        assertThat(ModelIdentity.derived(props("/srv/a/tiny.gguf"), models(766, 1573120)))
                .isEqualTo(ModelIdentity.derived(props("/mnt/b/tiny.gguf"), models(766, 1573120)))
                .doesNotContain("/srv");
    }

    @Test
    void anotherFileOrVocabularyIsAnotherModel() {
        String tiny = ModelIdentity.derived(props("/srv/tiny.gguf"), models(766, 1573120));
        assertThat(ModelIdentity.derived(props("/srv/other.gguf"), models(766, 1573120))).isNotEqualTo(tiny);
        assertThat(ModelIdentity.derived(props("/srv/tiny.gguf"), models(767, 1573120))).isNotEqualTo(tiny);
        assertThat(ModelIdentity.derived(props("/srv/tiny.gguf"), models(766, 1573121))).isNotEqualTo(tiny);
    }

    @Test
    void tooLittleKnownIsNoIdentity() {
        assertThat(ModelIdentity.derived(props(""), models(766, 1573120))).isNull();
        assertThat(ModelIdentity.derived(props("/srv/tiny.gguf"), JSON.readTree("{\"data\":[]}"))).isNull();
    }

    @Test
    void theSettingNamesTheModelOrTurnsItOff() {
        assertThat(ModelIdentity.configured("sha256:abc")).isEqualTo("sha256:abc");
        assertThat(ModelIdentity.configured("auto")).isNull();
        assertThat(ModelIdentity.configured("none")).isNull();
        assertThat(ModelIdentity.isNone("NONE")).isTrue();
        assertThat(ModelIdentity.isAuto(null)).isTrue();
    }
}
