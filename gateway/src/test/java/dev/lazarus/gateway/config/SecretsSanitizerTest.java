package dev.lazarus.gateway.config;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SecretsSanitizerTest {

    @ParameterizedTest
    @CsvSource({
            "lazarus.security.api-keys[0], true",
            "LAZARUS_SECURITY_APIKEYS_1, true",
            "lazarus.admin.token, true",
            "LAZARUS_ADMIN_TOKEN, true",
            "lazarus.backends[0].settings.api-key, true",
            "LAZARUS_BACKENDS_2_SETTINGS_APIKEY, true",
            "lazarus.backends[1].settings.hf-token, true",
            "lazarus.backends[1].settings.proxy-password, true",
            "lazarus.policy.postgres.password, true",
            "lazarus.key-limits.keys[0].key, true",
            "LAZARUS_KEYLIMITS_KEYS_0_KEY, true",
            "lazarus.key-limits.keys[0].name, false",
            "lazarus.key-limits.keys[0].tokens-per-minute, false",
            "LAZARUS_POLICY_POSTGRES_PASSWORD, true",
            "lazarus.policy.postgres.url, false",
            "lazarus.policy.postgres.username, false",
            "lazarus.backends[0].settings.url, false",
            "lazarus.backends[0].settings.model, false",
            "lazarus.admin.enabled, false",
            "lazarus.limits.max-body-size, false"})
    void secretsAreRecognisedByTheirRelaxedNames(String key, boolean secret) {
        assertThat(SecretsSanitizer.isSecret().test(key)).isEqualTo(secret);
    }
}
