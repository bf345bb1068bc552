package dev.lazarus.gateway.api;

import dev.lazarus.gateway.config.LazarusProperties;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import tools.jackson.databind.json.JsonMapper;

/** The HTTP layer's collaborators, built from the typed configuration. */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(ConnectionProperties.class)
class ApiConfiguration {

    @Bean
    ErrorMapper errorMapper(LazarusProperties properties) {
        return new ErrorMapper(properties.routing().retryAfter());
    }

    @Bean
    RequestReader requestReader(JsonMapper json, LazarusProperties properties) {
        return new RequestReader(json, properties.limits().maxBodySize().toBytes(),
                properties.limits().maxJsonDepth(), properties.limits().maxJsonTokens());
    }

    @Bean
    RequestValidator requestValidator() {
        return new RequestValidator();
    }

    @Bean
    ResponseWriter responseWriter(JsonMapper json, ErrorMapper errors) {
        return new ResponseWriter(json, errors);
    }

    @Bean
    NettyServerCustomizer malformedRequestAnswers(JsonMapper json) {
        return MalformedRequestHandler.customizer(json);
    }

    @Bean
    NettyServerCustomizer connectionGuard(ConnectionProperties connections, JsonMapper json) {
        return ConnectionGuard.customizer(ConnectionGuard.Settings.of(connections, json));
    }

    @Bean
    ApiKeyFilter apiKeyFilter(LazarusProperties properties) {
        return new ApiKeyFilter(properties.security().apiKeys());
    }
}
