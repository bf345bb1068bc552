package dev.lazarus.gateway.api.responses;

import dev.lazarus.gateway.policy.PolicyProperties;
import java.time.Clock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import tools.jackson.databind.json.JsonMapper;

/**
 * The Responses API's store: the policy store's PostgreSQL database when it has one (replicas share the responses),
 * else this gateway's memory; another {@link ResponseStore} bean replaces both.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(ResponsesProperties.class)
class ResponsesConfiguration {

    private static final Logger log = LoggerFactory.getLogger(ResponsesConfiguration.class);

    @Bean
    @ConditionalOnMissingBean
    ResponseStore responseStore(ResponsesProperties properties, PolicyProperties policy, JsonMapper json) {
        if (policy.store() == PolicyProperties.StoreKind.POSTGRES) {
            PolicyProperties.Postgres pg = policy.postgres();
            log.info("responses store: PostgreSQL (shared by every replica)");
            return new PostgresResponseStore(pg.url(), pg.username(), pg.password(), pg.poolSize(), json,
                    properties.storeMaxEntries(), properties.storeTtl(), Clock.systemUTC());
        }
        return new InMemoryResponseStore(properties.storeMaxEntries(), properties.storeTtl(), Clock.systemUTC());
    }
}
