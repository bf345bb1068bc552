package dev.lazarus.gateway.config;

import org.springframework.boot.actuate.endpoint.SanitizingFunction;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Masks API keys in actuator dumps ({@code /actuator/env}, {@code /actuator/configprops}) even
 * when an operator turns value display on: "api-keys" is not among Spring's default sensitive
 * key patterns.
 */
@Configuration(proxyBeanMethods = false)
class ApiKeySanitizer {

    @Bean
    SanitizingFunction lazarusApiKeySanitizer() {
        // Relaxed names: lazarus.security.api-keys[0], LAZARUS_SECURITY_APIKEYS, ...
        return SanitizingFunction.sanitizeValue().ifKeyMatches((String key) -> key.toLowerCase(java.util.Locale.ROOT)
                .replaceAll("[^a-z]", "")
                .startsWith("lazarussecurityapikeys"));
    }
}
