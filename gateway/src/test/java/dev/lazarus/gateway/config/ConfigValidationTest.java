package dev.lazarus.gateway.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.gateway.routing.BackendRegistry;
import dev.lazarus.gateway.routing.Router;
import dev.lazarus.gateway.testing.ScriptedBackend;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** Startup validation, without a web server: the configuration classes alone. */
class ConfigValidationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withUserConfiguration(GatewayConfiguration.class);

    @Test
    void aRouteToAnUnknownBackendFailsNamingModelAndId() {
        runner.withPropertyValues(
                        "lazarus.backends[0].id=one", "lazarus.backends[0].kind=scripted",
                        "lazarus.models[0].name=chat", "lazarus.models[0].backends[0]=one",
                        "lazarus.models[0].backends[1]=tow")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause()
                            .isInstanceOf(GatewayConfigException.class)
                            .hasMessageContaining("model 'chat' routes to unknown backend 'tow'")
                            .hasMessageContaining("configured backends: one");
                });
    }

    @Test
    void anUnknownKindFailsWithTheFactoriesMessage() {
        runner.withPropertyValues("lazarus.backends[0].id=x", "lazarus.backends[0].kind=warp-drive")
                .run(context -> assertThat(context.getStartupFailure()).rootCause()
                        .hasMessageContaining("backend 'x'")
                        .hasMessageContaining("unknown backend kind 'warp-drive'")
                        .hasMessageContaining("scripted"));
    }

    @Test
    void missingFieldsFailBeanValidation() {
        runner.withPropertyValues("lazarus.backends[0].id=x", "lazarus.models[0].name=m")
                .run(context -> assertThat(context.getStartupFailure()).rootCause().message()
                        .contains("kind").contains("backends"));
    }

    @Test
    void duplicateIdsFail() {
        runner.withPropertyValues(
                        "lazarus.backends[0].id=x", "lazarus.backends[0].kind=scripted",
                        "lazarus.backends[1].id=x", "lazarus.backends[1].kind=scripted")
                .run(context -> assertThat(context.getStartupFailure()).rootCause()
                        .hasMessageContaining("backend id 'x' is configured twice"));
    }

    @Test
    void aValidConfigurationStartsAndClosesItsBackendsOnShutdown() {
        ScriptedBackend[] created = new ScriptedBackend[1];
        runner.withPropertyValues(
                        "lazarus.backends[0].id=closing", "lazarus.backends[0].kind=scripted",
                        "lazarus.models[0].name=m", "lazarus.models[0].backends[0]=closing",
                        "lazarus.security.api-keys[0]=very-secret")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(Router.class).hasSingleBean(BackendRegistry.class);
                    created[0] = (ScriptedBackend) context.getBean(BackendRegistry.class).find("closing").orElseThrow();
                    assertThat(created[0].closed()).isFalse();
                    LazarusProperties properties = context.getBean(LazarusProperties.class);
                    assertThat(properties.limits().maxBodySize().toMegabytes()).isEqualTo(4);
                    assertThat(properties.toString()).doesNotContain("very-secret");
                });
        assertThat(created[0].closed()).isTrue();
    }
}
