package dev.lazarus.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Which backend metadata keys name a place on a server, and so never reach {@code /v1/models}. */
class ModelMetadataKeysTest {

    @ParameterizedTest
    @CsvSource({
            "model_path, true", "path, true", "cache_dir, true", "cache-dirs, true", "base.url, true",
            "upstream_host, true", "modelPath, true", "baseUrl, true", "MODEL_FILE, true", "tokenizer_uri, true",
            "profile, false", "architecture, false", "quantization, false", "context_length, false",
            "vocab_size, false", "random_weights, false", "llama_cpp_build, false", "parameters, false"})
    void locationsAreRecognised(String key, boolean location) {
        assertThat(ModelsController.isLocation(key)).isEqualTo(location);
    }
}
