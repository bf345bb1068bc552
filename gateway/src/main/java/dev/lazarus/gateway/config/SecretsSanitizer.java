package dev.lazarus.gateway.config;

import java.util.Locale;
import java.util.function.Predicate;
import org.springframework.boot.actuate.endpoint.SanitizingFunction;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Masks the gateway's secrets in actuator dumps ({@code /actuator/env}, {@code /actuator/configprops})
 * even when an operator turns value display on: the {@code /v1} API keys, the admin token and a
 * backend's upstream credentials ({@code lazarus.backends[n].settings.api-key}, {@code *-token},
 * {@code *-password}, {@code *-secret}). Spring's own patterns do not cover "api-keys" lists or
 * free-form backend settings.
 */
@Configuration(proxyBeanMethods = false)
class SecretsSanitizer {

    @Bean
    SanitizingFunction lazarusSecretsSanitizer() {
        return SanitizingFunction.sanitizeValue().ifKeyMatches(isSecret());
    }

    /** On relaxed names: {@code lazarus.security.api-keys[0]}, {@code LAZARUS_ADMIN_TOKEN}, ... */
    static Predicate<String> isSecret() {
        return key -> {
            String k = key.toLowerCase(Locale.ROOT).replaceAll("[^a-z]", "");
            return k.startsWith("lazarussecurityapikeys")
                    || k.equals("lazarusadmintoken")
                    || k.startsWith("lazarusbackends") && k.contains("settings")
                            && (k.endsWith("apikey") || k.endsWith("token") || k.endsWith("password")
                                    || k.endsWith("secret"));
        };
    }
}
