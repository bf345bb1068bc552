package dev.lazarus.gateway.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.gateway.LazarusGatewayApplication;
import dev.lazarus.gateway.routing.Endpoint;
import dev.lazarus.gateway.routing.RoutePlanner;
import dev.lazarus.gateway.routing.RouteTable;
import dev.lazarus.gateway.routing.RouteTarget;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Two application contexts, one after the other, on the same policy store: a candidate rolled back
 * in the first stays rolled back in the second, gets no traffic there, and the operator's route
 * change is still in effect.
 */
class RollbackSurvivesRestartTest {

    @TempDir
    Path store;

    @Test
    void rolledBackCandidateStaysRolledBackAfterRestart() {
        try (ConfigurableApplicationContext first = start()) {
            PolicyEngine engine = first.getBean(PolicyEngine.class);
            assertThat(engine.state("alpha").orElseThrow().state()).isEqualTo(PolicyState.CANDIDATE);
            engine.promote("alpha", Actor.GATE, "decision gate GO", Map.of("tokens_per_second", 14.2));
            assertThat(plan(first)).containsExactly("alpha", "beta");
            first.getBean(RouteOverrides.class).set("org/slashed-model", List.of("alpha", "beta"), List.of("beta"));
            engine.rollback("alpha", Actor.POLICY, "circuit breaker opened 3 times within 10 min", Map.of());
            assertThat(plan(first)).containsExactly("beta");
        }
        try (ConfigurableApplicationContext second = start()) {
            BackendPolicyState alpha = second.getBean(PolicyEngine.class).state("alpha").orElseThrow();
            assertThat(alpha.state()).isEqualTo(PolicyState.ROLLED_BACK);
            assertThat(alpha.reason()).isEqualTo("circuit breaker opened 3 times within 10 min");
            assertThat(plan(second)).containsExactly("beta");
            assertThat(second.getBean(RouteOverrides.class).chain("org/slashed-model")).contains(List.of("alpha", "beta"));
            List<AuditEvent> journal = second.getBean(PolicyStore.class).allEvents();
            assertThat(journal).extracting(AuditEvent::action).containsSubsequence("promote", "route", "rollback");
        }
    }

    private ConfigurableApplicationContext start() {
        return new SpringApplicationBuilder(LazarusGatewayApplication.class)
                .profiles("test")
                // Arguments, not builder properties: those are defaults that the test profile would override.
                .run("--server.port=0", "--lazarus.policy.store-path=" + store,
                        "--lazarus.policy.backends.alpha.role=candidate");
    }

    private static List<String> plan(ConfigurableApplicationContext context) {
        RouteTable routes = context.getBean(RouteTable.class);
        return context.getBean(RoutePlanner.class).plan(routes.find("test-model").orElseThrow(), Endpoint.CHAT)
                .stream().map(RouteTarget::backendId).toList();
    }
}
