package dev.lazarus.gateway.api;

import dev.lazarus.gateway.config.LazarusProperties;
import dev.lazarus.gateway.routing.ApiEndpoint;
import java.util.Set;
import org.springframework.http.HttpMethod;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.reactive.function.server.RequestPredicate;
import org.springframework.web.reactive.function.server.RequestPredicates;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.server.MethodNotAllowedException;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/** The HTTP layer's collaborators, built from the typed configuration. */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties({ConnectionProperties.class, KeyLimitsProperties.class})
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

    /** The two completion endpoints, taken as the last web filter ({@link OpenAiEndpointFilter}). */
    @Bean
    OpenAiEndpointFilter openAiEndpointFilter(OpenAiController controller, JsonEndpointsController json) {
        return new OpenAiEndpointFilter(controller, json);
    }

    /**
     * Another method than POST on the completion endpoints' paths: a 405 naming POST, as an annotated mapping
     * answers (POST itself never reaches the dispatcher: {@link OpenAiEndpointFilter}).
     */
    @Bean
    RouterFunction<ServerResponse> openAiRoutes() {
        RequestPredicate paths = RequestPredicates.path(OpenAiController.CHAT_PATH)
                .or(RequestPredicates.path(OpenAiController.COMPLETIONS_PATH));
        for (ApiEndpoint endpoint : OpenAiEndpointFilter.jsonEndpoints()) {
            for (String path : endpoint.paths()) {
                paths = paths.or(RequestPredicates.path(path));
            }
        }
        return RouterFunctions.route()
                .route(paths, request -> Mono.error(new MethodNotAllowedException(request.method(), Set.of(HttpMethod.POST))))
                .build();
    }

    @Bean
    ApiKeyFilter apiKeyFilter(LazarusProperties properties, KeyLimitsProperties keyLimits) {
        return new ApiKeyFilter(properties.security().apiKeys(),
                KeyLimits.of(keyLimits, properties.security().apiKeys()));
    }
}
