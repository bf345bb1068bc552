package dev.lazarus.gateway.config;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.Redactor;
import java.util.ArrayList;
import java.util.List;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * The gateway's one {@link Redactor}: it knows every configured secret (the {@code /v1} API keys, the
 * admin token, the shared policy store's password, each backend's credential settings) and every text from a backend passes it before it
 * is shown, logged or journalled. The backends get it in their {@link BackendConfig}; the gateway
 * applies it where their health, self-descriptions and failures come in.
 */
@Configuration(proxyBeanMethods = false)
class RedactorConfiguration {

    @Bean
    Redactor redactor(LazarusProperties properties, Environment environment) {
        List<String> secrets = new ArrayList<>(properties.security().apiKeys());
        // Read here rather than through AdminProperties: configuration does not depend on the admin package.
        secrets.add(environment.getProperty("lazarus.admin.token"));
        secrets.add(environment.getProperty("lazarus.policy.postgres.password"));
        properties.backends().forEach(backend -> secrets.addAll(BackendConfig.secretValues(backend.settings())));
        return Redactor.of(secrets);
    }
}
