package dev.lazarus.gateway.policy;

import static org.assertj.core.api.Assertions.assertThat;

import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

/** A context that binds {@link PolicyProperties} and nothing else: what the properties tests start. */
final class PolicyPropertiesBinding {

    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(PolicyProperties.class)
    static class PropertiesOnly {}

    private PolicyPropertiesBinding() {
    }

    static ApplicationContextRunner runner() {
        return new ApplicationContextRunner().withUserConfiguration(PropertiesOnly.class);
    }

    /** Binding {@code properties} fails at start with a message that says {@code why}. */
    static void assertRefused(String why, String... properties) {
        runner().withPropertyValues(properties).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().message().contains(why);
        });
    }
}
