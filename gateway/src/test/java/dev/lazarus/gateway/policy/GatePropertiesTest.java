package dev.lazarus.gateway.policy;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** {@code lazarus.policy.gate.*}: the documented defaults, and thresholds that contradict each other refused at start. */
class GatePropertiesTest {

    private final ApplicationContextRunner runner = PolicyPropertiesBinding.runner();

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
        PolicyPropertiesBinding.assertRefused("hold-oracle-ratio must not be above go-oracle-ratio",
                "lazarus.policy.gate.hold-oracle-ratio=1.5");
    }

    @Test
    void anAgreementFloorOverOneIsRefused() {
        PolicyPropertiesBinding.assertRefused("agreement.floor", "lazarus.policy.gate.agreement.floor=1.5");
    }
}
