package dev.lazarus.gateway.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** {@code lazarus.policy.store} and {@code lazarus.policy.postgres.*}: embedded by default, postgres needs its URL. */
class StorePropertiesTest {

    private final ApplicationContextRunner runner = PolicyPropertiesBinding.runner();

    @Test
    void theEmbeddedStoreIsTheDefault() {
        runner.run(context -> {
            PolicyProperties properties = context.getBean(PolicyProperties.class);
            assertThat(properties.store()).isEqualTo(PolicyProperties.StoreKind.EMBEDDED);
            assertThat(properties.storePath()).isEqualTo("./data/lazarus-policy");
            assertThat(properties.postgres().pollInterval()).isEqualTo(Duration.ofMillis(250));
            assertThat(properties.postgres().poolSize()).isEqualTo(4);
            assertThat(properties.postgres().figuresInterval()).isEqualTo(Duration.ofSeconds(2));
        });
    }

    @Test
    void postgresWithoutAUrlIsRefusedNamingTheKey() {
        PolicyPropertiesBinding.assertRefused("lazarus.policy.postgres.url is required with lazarus.policy.store: postgres",
                "lazarus.policy.store=postgres");
    }

    @Test
    void postgresIsBoundFromItsKeys() {
        runner.withPropertyValues("lazarus.policy.store=postgres",
                "lazarus.policy.postgres.url=jdbc:postgresql://db:5432/lazarus",
                "lazarus.policy.postgres.username=lazarus", "lazarus.policy.postgres.poll-interval=100ms",
                "lazarus.policy.replica-id=gw-1").run(context -> {
            PolicyProperties properties = context.getBean(PolicyProperties.class);
            assertThat(properties.store()).isEqualTo(PolicyProperties.StoreKind.POSTGRES);
            assertThat(properties.postgres().url()).isEqualTo("jdbc:postgresql://db:5432/lazarus");
            assertThat(properties.postgres().pollInterval()).isEqualTo(Duration.ofMillis(100));
            assertThat(Replica.named(properties.replicaId()).id()).isEqualTo("gw-1");
        });
    }
}
