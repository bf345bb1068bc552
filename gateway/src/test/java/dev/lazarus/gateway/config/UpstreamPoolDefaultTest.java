package dev.lazarus.gateway.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** An HTTP backend's pool follows the gateway's cap on client connections unless its own size is set. */
class UpstreamPoolDefaultTest {

    @Test
    void theGatewaysCapIsThePoolsDefault() {
        assertThat(GatewayConfiguration.withPool(Map.of("url", "http://127.0.0.1:1"), 4096))
                .containsEntry(GatewayConfiguration.POOL_KEY, 4096).containsEntry("url", "http://127.0.0.1:1");
    }

    @Test
    void aPoolSizeSetForTheBackendIsKept() {
        assertThat(GatewayConfiguration.withPool(Map.of("max-connections", 2), 4096))
                .containsExactlyEntriesOf(Map.of("max-connections", 2));
    }

    @Test
    void withoutTheGatewaysLimitsTheBackendsOwnDefaultStays() {
        assertThat(GatewayConfiguration.withPool(Map.of("url", "u"), 0)).doesNotContainKey(GatewayConfiguration.POOL_KEY);
    }
}
