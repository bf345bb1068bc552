package dev.lazarus.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.gateway.config.GatewayConfigException;
import dev.lazarus.gateway.testing.CapturedLogs;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How {@code lazarus.key-limits} meets {@code lazarus.security.api-keys} at start. */
class KeyLimitsConfigTest {

    private static final String SECRET = "sk-secret-0123456789";

    @Test
    void limitsWithoutApiKeysSayOnceThatNothingIsLimitedWithoutNamingAnySecret() {
        List<String> warnings = warnings(new KeyLimitsProperties(0, 1000, 0, List.of()), List.of());
        assertThat(warnings).singleElement().satisfies(line -> assertThat(line)
                .contains("lazarus.key-limits", "lazarus.security.api-keys is empty").doesNotContain(SECRET));
    }

    @Test
    void limitsWithApiKeysOrNoLimitsWithoutKeysSayNothing() {
        assertThat(warnings(new KeyLimitsProperties(5, 0, 0, List.of()), List.of(SECRET))).isEmpty();
        assertThat(warnings(new KeyLimitsProperties(0, 0, 0, List.of()), List.of())).isEmpty();
    }

    @Test
    void aKeysOwnLimitsForAKeyThatIsNotAnApiKeyStopTheStartNamingTheEntryNotTheKey() {
        KeyLimitsProperties properties = new KeyLimitsProperties(0, 0, 0,
                List.of(new KeyLimitsProperties.Key("ci", SECRET, 1, null, null)));
        assertThatThrownBy(() -> KeyLimits.of(properties, List.of("another-key")))
                .isInstanceOf(GatewayConfigException.class)
                .hasMessageContaining("'ci'")
                .hasMessageNotContaining(SECRET);
    }

    @Test
    void aKeysOwnLimitsTakeTheDefaultsForWhatTheyLeaveUnset() {
        KeyLimitsProperties properties = new KeyLimitsProperties(60, 1000, 2,
                List.of(new KeyLimitsProperties.Key("ci", SECRET, null, 50L, null)));
        assertThat(properties.of(properties.keys().getFirst()))
                .isEqualTo(new KeyLimitsProperties.Limits(60, 50, 2));
        assertThat(properties.keys().getFirst().toString()).doesNotContain(SECRET);
    }

    private static List<String> warnings(KeyLimitsProperties properties, List<String> apiKeys) {
        CapturedLogs logs = new CapturedLogs().start(List.of());
        try {
            KeyLimits.of(properties, apiKeys);
        } finally {
            logs.stop();
        }
        return logs.events().stream().filter(e -> e.getLoggerName().equals(KeyLimits.class.getName()))
                .map(e -> e.getFormattedMessage()).toList();
    }
}
