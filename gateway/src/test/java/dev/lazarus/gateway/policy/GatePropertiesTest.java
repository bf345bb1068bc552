package dev.lazarus.gateway.policy;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

/** {@code lazarus.policy.gate.*}: the documented defaults, and thresholds that contradict each other refused at start. */
class GatePropertiesTest {

    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(PolicyProperties.class)
    static class PropertiesOnly {}

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withUserConfiguration(PropertiesOnly.class);

    @Test
    void defaultsAreTheDocumentedOnes() {
        runner.run(context -> {
            PolicyProperties.Gate gate = context.getBean(PolicyProperties.class).gate();
            assertThat(gate.goOracleRatio()).isEqualTo(1.1);
            assertThat(gate.holdOracleRatio()).isEqualTo(0.75);
            assertThat(gate.floorTokensPerSecond()).isZero();
            assertThat(gate.goTokensPerSecond()).isEqualTo(12);
            assertThat(gate.holdTokensPerSecond()).isEqualTo(8);
            PolicyProperties.Agreement agreement = gate.agreement();
            assertThat(agreement.enabled()).isTrue();
            assertThat(agreement.forcedTokens()).isEqualTo(16);
            assertThat(agreement.floor()).isEqualTo(0.9);
            assertThat(agreement.maxMeanLogprobDelta()).isEqualTo(0.5);
            assertThat(agreement.required()).isFalse();
        });
    }

    @Test
    void aHoldRatioAboveTheGoRatioIsRefusedWithTheKeys() {
        runner.withPropertyValues("lazarus.policy.gate.hold-oracle-ratio=1.5").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().message()
                    .contains("hold-oracle-ratio must not be above go-oracle-ratio");
        });
    }

    @Test
    void anAgreementFloorOverOneIsRefused() {
        runner.withPropertyValues("lazarus.policy.gate.agreement.floor=1.5").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().message().contains("agreement.floor");
        });
    }
}
