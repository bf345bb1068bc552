package dev.lazarus.gateway.config;

import dev.lazarus.backend.api.Redactor;
import java.util.Locale;
import java.util.function.Predicate;
import org.springframework.boot.actuate.endpoint.SanitizableData;
import org.springframework.boot.actuate.endpoint.SanitizingFunction;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Masks the gateway's secrets in actuator dumps ({@code /actuator/env}, {@code /actuator/configprops})
 * even when an operator turns value display on. By name: the {@code /v1} API keys (also as a key's own limits name them,
 * {@code lazarus.key-limits.keys[n].key}), the admin token, the
 * shared policy store's password ({@code lazarus.policy.postgres.password}) and a backend's credential settings ({@code lazarus.backends[n].settings.api-key}, {@code *-token},
 * {@code *-password}, {@code *-secret}); Spring's own patterns do not cover "api-keys" lists or
 * free-form backend settings. By value, through the {@link Redactor}: a secret also shows under names
 * nobody can list in advance, the environment variable a {@code ${...}} placeholder read it from
 * ({@code LAZARUS_API_KEY}) and the command line ({@code sun.java.command} with
 * {@code --lazarus.security.api-keys[0]=...}); there only the secret is masked, the rest stays readable.
 */
@Configuration(proxyBeanMethods = false)
class SecretsSanitizer {

    @Bean
    SanitizingFunction lazarusSecretsSanitizer(Redactor redactor) {
        return data -> {
            if (isSecret().test(data.getKey())) {
                return data.withValue(SanitizableData.SANITIZED_VALUE);
            }
            if (data.getValue() instanceof CharSequence text && redactor.reveals(text.toString())) {
                return data.withValue(redactor.redact(text.toString()));
            }
            return data;
        };
    }

    /** On relaxed names: {@code lazarus.security.api-keys[0]}, {@code LAZARUS_ADMIN_TOKEN}, ... */
    static Predicate<String> isSecret() {
        return key -> {
            String k = key.toLowerCase(Locale.ROOT).replaceAll("[^a-z]", "");
            return k.startsWith("lazarussecurityapikeys")
                    || k.startsWith("lazaruskeylimitskeys") && k.endsWith("key")
                    || k.equals("lazarusadmintoken")
                    || k.equals("lazarusmetricstoken")
                    || k.equals("lazaruspolicypostgrespassword")
                    || k.startsWith("lazarusbackends") && k.contains("settings")
                            && (k.endsWith("apikey") || k.endsWith("token") || k.endsWith("password")
                                    || k.endsWith("secret"));
        };
    }
}
