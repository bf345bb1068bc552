package dev.lazarus.llamacpp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendConfigException;
import dev.lazarus.backend.api.BackendFactories;
import dev.lazarus.backend.api.ChatProtocol;
import dev.lazarus.backend.api.ProtocolMode;
import dev.lazarus.llamacpp.http.StreamReuse;
import dev.lazarus.llamacpp.process.LlamaServerCommand;
import dev.lazarus.llamacpp.process.Supervision;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LlamaCppSettingsTest {

    private static BackendConfig config(Map<String, Object> settings) {
        return new BackendConfig("b1", "llamacpp", settings);
    }

    @Test
    void defaultsForAPlainUrl() {
        LlamaCppSettings s = LlamaCppSettings.from(config(Map.of("url", "http://127.0.0.1:8081/")));
        assertThat(s.baseUrl()).isEqualTo("http://127.0.0.1:8081");
        assertThat(s.supervised()).isFalse();
        assertThat(s.modelName()).isNull();
        assertThat(s.connectTimeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(s.firstTokenTimeout()).isEqualTo(Duration.ofSeconds(120));
        assertThat(s.idleTimeout()).isEqualTo(Duration.ofSeconds(30));
        assertThat(s.maxConnections()).isEqualTo(16);
        assertThat(s.poolMaxIdleTime()).isEqualTo(Duration.ofSeconds(3));
        assertThat(s.reuseStreamConnections()).isEqualTo(StreamReuse.Mode.AUTO);
        assertThat(s.assistantPrefill()).isEqualTo(AssistantPrefill.Mode.AUTO);
    }

    @Test
    void reuseStreamConnectionsIsAutoTrueOrFalse() {
        assertThat(LlamaCppSettings.from(config(Map.of("url", "http://127.0.0.1:8081", "reuse-stream-connections", false)))
                .reuseStreamConnections()).isEqualTo(StreamReuse.Mode.FALSE);
        assertThat(LlamaCppSettings.from(config(Map.of("url", "http://127.0.0.1:8081", "reuse-stream-connections", " Auto ")))
                .reuseStreamConnections()).isEqualTo(StreamReuse.Mode.AUTO);
        assertThat(LlamaCppSettings.from(new BackendConfig("b1", "openai", Map.of("url", "http://127.0.0.1:8081")))
                .reuseStreamConnections()).as("other servers keep streamed connections").isEqualTo(StreamReuse.Mode.TRUE);
        assertThatThrownBy(() -> LlamaCppSettings.from(config(Map.of("url", "http://127.0.0.1:8081",
                "reuse-stream-connections", "sometimes"))))
                .isInstanceOf(BackendConfigException.class)
                .hasMessageContaining("'reuse-stream-connections' must be auto, true or false, got 'sometimes'");
    }

    @Test
    void messagesAndResponsesArePassedThroughUntilLearnedOtherwiseUnlessSet() {
        LlamaCppSettings plain = LlamaCppSettings.from(config(Map.of("url", "http://127.0.0.1:8081")));
        assertThat(plain.protocols()).as("auto: native until the server lacks the endpoint")
                .containsEntry(ChatProtocol.MESSAGES, ProtocolMode.NATIVE)
                .containsEntry(ChatProtocol.RESPONSES, ProtocolMode.NATIVE);
        assertThat(plain.probedProtocols()).containsExactlyInAnyOrder(ChatProtocol.MESSAGES, ChatProtocol.RESPONSES);
        LlamaCppSettings set = LlamaCppSettings.from(config(Map.of("url", "http://127.0.0.1:8081",
                "messages", "translate", "responses", " OFF ")));
        assertThat(set.protocols()).containsEntry(ChatProtocol.MESSAGES, ProtocolMode.TRANSLATE)
                .containsEntry(ChatProtocol.RESPONSES, ProtocolMode.OFF);
        assertThat(set.probedProtocols()).isEmpty();
        assertThatThrownBy(() -> LlamaCppSettings.from(config(Map.of("url", "http://127.0.0.1:8081",
                "messages", "sometimes"))))
                .isInstanceOf(BackendConfigException.class)
                .hasMessageContaining("'messages'").hasMessageContaining("native, translate, off or auto")
                .hasMessageContaining("'sometimes'");
        LlamaCppSettings probed = LlamaCppSettings.from(config(Map.of("url", "http://127.0.0.1:8081",
                "messages", "native", "responses", "Auto")));
        assertThat(probed.protocols()).containsEntry(ChatProtocol.MESSAGES, ProtocolMode.NATIVE)
                .containsEntry(ChatProtocol.RESPONSES, ProtocolMode.NATIVE);
        assertThat(probed.probedProtocols()).containsExactly(ChatProtocol.RESPONSES);
    }

    @Test
    void readsEveryKey() {
        LlamaCppSettings s = LlamaCppSettings.from(config(Map.ofEntries(
                Map.entry("model-name", "tiny"), Map.entry("api-key", "sk-secret"),
                Map.entry("connect-timeout", "250ms"), Map.entry("first-token-timeout", "PT1M"),
                Map.entry("idle-timeout", "9s"), Map.entry("health-timeout", "2s"), Map.entry("max-connections", 4),
                Map.entry("pool-max-idle-time", "1s"), Map.entry("reuse-stream-connections", true),
                Map.entry("assistant-prefill", "false"),
                Map.entry("binary", "/usr/bin/llama-server"), Map.entry("command-prefix", List.of("chroot", "/srv/sid")),
                Map.entry("model", "/m/tiny.gguf"), Map.entry("ctx-size", 2048), Map.entry("threads", "2"),
                Map.entry("gpu-layers", 0), Map.entry("n-cpu-moe", 3), Map.entry("host", "127.0.0.1"),
                Map.entry("port", 18081), Map.entry("extra-args", "--jinja, --parallel,2"),
                Map.entry("startup-timeout", "2m"), Map.entry("health-poll-interval", "100ms"),
                Map.entry("restart-backoff", "500ms"), Map.entry("restart-backoff-max", "8s"),
                Map.entry("stop-grace-period", "3s"))));
        assertThat(s.baseUrl()).isEqualTo("http://127.0.0.1:18081");
        assertThat(s.modelName()).isEqualTo("tiny");
        assertThat(s.connectTimeout()).isEqualTo(Duration.ofMillis(250));
        assertThat(s.firstTokenTimeout()).isEqualTo(Duration.ofMinutes(1));
        assertThat(s.maxConnections()).isEqualTo(4);
        assertThat(s.reuseStreamConnections()).isEqualTo(StreamReuse.Mode.TRUE);
        assertThat(s.assistantPrefill()).isEqualTo(AssistantPrefill.Mode.FALSE);
        Supervision sup = s.supervision();
        assertThat(sup.commandPrefix()).containsExactly("chroot", "/srv/sid");
        assertThat(sup.extraArgs()).containsExactly("--jinja", "--parallel", "2");
        assertThat(sup.restartBackoffMax()).isEqualTo(Duration.ofSeconds(8));
        assertThat(LlamaServerCommand.build(sup, s.modelName())).containsExactly(
                "chroot", "/srv/sid", "/usr/bin/llama-server", "-m", "/m/tiny.gguf", "--alias", "tiny",
                "--host", "127.0.0.1", "--port", "18081", "-c", "2048", "-t", "2", "-ngl", "0", "--n-cpu-moe", "3",
                "--jinja", "--parallel", "2");
    }

    @Test
    void theApiKeyNeverShowsInText() {
        LlamaCppSettings s = LlamaCppSettings.from(config(Map.of("url", "http://127.0.0.1:1", "api-key", "sk-secret",
                "binary", "llama-server")));
        assertThat(s.toString()).doesNotContain("sk-secret").contains("api-key=***");
        assertThat(LlamaServerCommand.build(s.supervision(), null)).noneMatch(arg -> arg.contains("sk-secret"));
    }

    @Test
    void anApiKeyAmongTheExtraArgumentsIsMaskedInTheLoggedCommand() {
        assertThat(LlamaServerCommand.forLog(List.of("llama-server", "--api-key", "sk-1", "--api-key=sk-2", "-c", "8")))
                .isEqualTo("llama-server --api-key *** --api-key=*** -c 8");
    }

    @Test
    void supervisedWithoutPortPicksOneAndLeavesOutUnsetFlags() {
        LlamaCppSettings s = LlamaCppSettings.from(config(Map.of("binary", "llama-server")));
        int port = s.supervision().port();
        assertThat(port).isPositive();
        assertThat(s.baseUrl()).isEqualTo("http://127.0.0.1:" + port);
        assertThat(LlamaServerCommand.build(s.supervision(), null))
                .containsExactly("llama-server", "--host", "127.0.0.1", "--port", Integer.toString(port));
    }

    @Test
    void badSettingsNameTheKey() {
        assertThatThrownBy(() -> LlamaCppSettings.from(config(Map.of())))
                .isInstanceOf(BackendConfigException.class).hasMessageContaining("'url' is required");
        assertThatThrownBy(() -> LlamaCppSettings.from(config(Map.of("url", "127.0.0.1:8081"))))
                .isInstanceOfSatisfying(BackendConfigException.class, e -> assertThat(e.setting()).isEqualTo("url"));
        assertThatThrownBy(() -> LlamaCppSettings.from(config(Map.of("url", "http://h:1", "idle-timeout", "0s"))))
                .isInstanceOfSatisfying(BackendConfigException.class, e -> assertThat(e.setting()).isEqualTo("idle-timeout"));
        assertThatThrownBy(() -> LlamaCppSettings.from(config(Map.of("url", "http://h:1", "max-connections", 0))))
                .isInstanceOfSatisfying(BackendConfigException.class, e -> assertThat(e.setting()).isEqualTo("max-connections"));
        assertThatThrownBy(() -> LlamaCppSettings.from(config(Map.of("binary", "x", "restart-backoff", "10s",
                "restart-backoff-max", "1s"))))
                .isInstanceOfSatisfying(BackendConfigException.class, e -> assertThat(e.setting()).isEqualTo("restart-backoff-max"));
    }

    @Test
    void theFactoryIsFoundByServiceLoader() {
        BackendFactories factories = BackendFactories.load(getClass().getClassLoader());
        assertThat(factories.kinds()).contains("llamacpp");
        try (var backend = factories.create(config(Map.of("url", "http://127.0.0.1:9", "model-name", "m")))) {
            assertThat(backend).isInstanceOf(LlamaCppBackend.class);
            assertThat(backend.describe().kind()).isEqualTo("llamacpp");
            assertThat(backend.describe().models()).extracting(m -> m.id()).containsExactly("m");
            assertThat(backend.describe().capabilities().assistantPrefill()).isTrue();
            assertThat(backend.describe().capabilities().passthroughExtras()).isTrue();
        }
    }
}
