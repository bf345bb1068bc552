package dev.lazarus.gateway.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.ActiveProfiles;

/**
 * The whole path without an operator: {@code alpha} is configured as a candidate, passes preflight,
 * the automatic gate benchmarks it against the oracle once the gateway is ready, and with
 * auto-promote a GO promotes it.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.NONE, properties = {
        "lazarus.policy.backends.alpha.role=candidate",
        "lazarus.policy.gate.auto-run=true",
        "lazarus.policy.auto-promote=true",
        "lazarus.policy.gate.runs=1",
        "lazarus.policy.gate.max-ttft=60s",
        // scripted backends are equally fast: this test is about the wiring, not the speed ratio
        "lazarus.policy.gate.go-oracle-ratio=0",
        "lazarus.policy.gate.hold-oracle-ratio=0"})
@ActiveProfiles("test")
class AutoGateWiringTest {

    @Autowired
    PolicyEngine engine;

    @Test
    void aConfiguredCandidateIsBenchmarkedAndPromotedByItself() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (engine.state("alpha").orElseThrow().state() != PolicyState.PROMOTED && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        BackendPolicyState alpha = engine.state("alpha").orElseThrow();
        assertThat(alpha.state()).isEqualTo(PolicyState.PROMOTED);
        assertThat(alpha.reason()).startsWith("decision gate GO");
    }
}
