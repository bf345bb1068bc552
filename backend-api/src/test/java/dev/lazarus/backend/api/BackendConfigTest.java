package dev.lazarus.backend.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BackendConfigTest {

    @Test
    void typedGettersParseAndNameTheBadKey() {
        var c = new BackendConfig("b1", "llamacpp", Map.of("threads", "8", "ttft-timeout", "1500ms",
                "idle", "PT30S", "args", Map.of("1", "y", "0", "x"), "csv", "a, b", "flag", "true"));
        assertThat(c.integer("threads", 1)).isEqualTo(8);
        assertThat(c.duration("ttft-timeout", null)).isEqualTo(Duration.ofMillis(1500));
        assertThat(c.duration("idle", null)).isEqualTo(Duration.ofSeconds(30));
        assertThat(c.duration("missing", Duration.ofMinutes(2))).isEqualTo(Duration.ofMinutes(2));
        assertThat(c.strings("args")).isEqualTo(List.of("x", "y"));
        assertThat(c.strings("csv")).isEqualTo(List.of("a", "b"));
        assertThat(c.bool("flag", false)).isTrue();
        assertThatThrownBy(() -> c.integer("csv", 0)).isInstanceOf(BackendConfigException.class)
                .hasMessageContaining("b1").hasMessageContaining("csv");
        assertThatThrownBy(() -> c.requireString("url")).hasMessageContaining("'url' is required");
    }

    @Test
    void toStringMasksSecrets() {
        var c = new BackendConfig("b1", "llamacpp", Map.of("url", "http://127.0.0.1:8080", "api-key", "sk-secret",
                "admin-token", "t0ken"));
        assertThat(c.toString()).contains("http://127.0.0.1:8080", "api-key=***")
                .doesNotContain("sk-secret", "t0ken");
    }

    @Test
    void unknownKindNamesTheKnownOnes() {
        var factories = BackendFactories.load();
        assertThatThrownBy(() -> factories.create(new BackendConfig("x", "nope", Map.of())))
                .isInstanceOf(BackendConfigException.class).hasMessageContaining("unknown backend kind 'nope'");
    }
}
