package dev.lazarus.gateway.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.gateway.config.GatewayConfigException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A second gateway on the same policy store directory stops with one line naming the one that holds it. */
class StoreLockedTest {

    @TempDir
    Path dir;

    @Test
    void aSecondOpenNamesTheProcessHoldingTheStore() {
        try (EmbeddedPolicyStore first = EmbeddedPolicyStore.open(dir)) {
            assertThatThrownBy(() -> EmbeddedPolicyStore.open(dir))
                    .isInstanceOf(GatewayConfigException.class)
                    .hasMessageStartingWith("the policy store " + dir.toAbsolutePath() + " is in use by another gateway"
                            + " (process " + ProcessHandle.current().pid() + " on ")
                    .hasMessageEndingWith("stop that gateway, or give this one its own lazarus.policy.store-path")
                    .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
        }
        EmbeddedPolicyStore.open(dir).close(); // released with the first
    }
}
