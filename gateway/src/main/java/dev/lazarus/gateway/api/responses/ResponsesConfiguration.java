package dev.lazarus.gateway.api.responses;

import java.time.Clock;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The Responses API's store: in memory unless another {@link ResponseStore} bean is declared. */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(ResponsesProperties.class)
class ResponsesConfiguration {

    @Bean
    @ConditionalOnMissingBean
    ResponseStore responseStore(ResponsesProperties properties) {
        return new InMemoryResponseStore(properties.storeMaxEntries(), properties.storeTtl(), Clock.systemUTC());
    }
}
