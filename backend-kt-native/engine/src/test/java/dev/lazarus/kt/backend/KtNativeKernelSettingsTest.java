package dev.lazarus.kt.backend;

import static dev.lazarus.kt.backend.KtNativeBackendPlacementTest.settings;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendConfigException;
import dev.lazarus.kt.tensor.GgmlOrders;
import dev.lazarus.kt.tensor.KernelConfig;
import org.junit.jupiter.api.Test;

/** {@code kernels} and {@code ggml-variant}: each backend's own kernel choice, handed to its model as it loads. */
class KtNativeKernelSettingsTest {

    @Test
    void twoBackendsOfOneGatewayReadTheirOwnKernelChoice() {
        KtNativeSettings reference = KtNativeSettings.from(new BackendConfig("ref", "kt-native",
                settings("kernels", "java", "ggml-variant", "icelake")));
        KtNativeSettings fast = KtNativeSettings.from(new BackendConfig("fast", "kt-native",
                settings("kernels", "native", "ggml-variant", "zen4")));
        assertThat(reference.kernels()).isEqualTo(new KernelConfig(KernelConfig.Choice.JAVA, GgmlOrders.AVX512));
        assertThat(fast.kernels()).isEqualTo(new KernelConfig(KernelConfig.Choice.NATIVE, GgmlOrders.AVX512_BF16));
    }

    @Test
    void withoutSettingsABackendTakesTheJvmsDefaults() {
        assertThat(KtNativeSettings.from(new BackendConfig("kt", "kt-native", settings())).kernels())
                .isEqualTo(KernelConfig.fromSystemProperties());
        assertThat(KtNativeSettings.from(new BackendConfig("kt", "kt-native", settings("kernels", "java"))).kernels())
                .isEqualTo(KernelConfig.fromSystemProperties().with(KernelConfig.Choice.JAVA));
    }

    @Test
    void refusesValuesItDoesNotKnowByTheirSetting() {
        assertThatThrownBy(() -> KtNativeSettings.from(new BackendConfig("kt", "kt-native", settings("kernels", "gpu"))))
                .isInstanceOf(BackendConfigException.class).hasMessageContaining("'kernels'").hasMessageContaining("gpu");
        assertThatThrownBy(() -> KtNativeSettings.from(new BackendConfig("kt", "kt-native",
                settings("ggml-variant", "pentium")))).isInstanceOf(BackendConfigException.class)
                .hasMessageContaining("'ggml-variant'").hasMessageContaining("pentium");
    }
}
