package dev.lazarus.kt.backend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendConfigException;
import dev.lazarus.kt.host.HostCpu;
import dev.lazarus.kt.model.AttentionOrder;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code flash-attention} and {@code flash-attention-threads}: llama-server's {@code -fa} and {@code -t}. */
class KtNativeSettingsAttentionTest {

    @Test
    void flashAttentionIsOnByDefaultAsLlamaServersAutoOnACpuWithItsDefaultThreadCount() {
        assertThat(settings(Map.of()).attention()).isEqualTo(AttentionOrder.flash(HostCpu.physicalCores()));
        assertThat(settings(Map.of("flash-attention", "auto")).attention()).isEqualTo(AttentionOrder.flash(HostCpu.physicalCores()));
    }

    @Test
    void onAndOffAsWordsOrAsTheBooleansYamlMakesOfThem() {
        assertThat(settings(Map.of("flash-attention", "on", "flash-attention-threads", 3)).attention())
                .isEqualTo(AttentionOrder.flash(3));
        assertThat(settings(Map.of("flash-attention", true, "flash-attention-threads", "2")).attention())
                .isEqualTo(AttentionOrder.flash(2));
        assertThat(settings(Map.of("flash-attention", "OFF")).attention()).isEqualTo(AttentionOrder.NON_FLASH);
        assertThat(settings(Map.of("flash-attention", false)).attention()).isEqualTo(AttentionOrder.NON_FLASH);
    }

    @Test
    void anythingElseIsRefusedNamingTheSetting() {
        assertThatThrownBy(() -> settings(Map.of("flash-attention", "fast")))
                .isInstanceOf(BackendConfigException.class).hasMessageContaining("flash-attention")
                .hasMessageContaining("fast");
        assertThatThrownBy(() -> settings(Map.of("flash-attention-threads", 0)))
                .isInstanceOf(BackendConfigException.class).hasMessageContaining("flash-attention-threads");
    }

    private static KtNativeSettings settings(Map<String, Object> extra) {
        Map<String, Object> s = new HashMap<>(extra);
        s.put("model", "/models/m.gguf");
        return KtNativeSettings.from(new BackendConfig("kt", "kt-native", s));
    }
}
