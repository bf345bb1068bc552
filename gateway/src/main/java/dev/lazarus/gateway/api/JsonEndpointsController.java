package dev.lazarus.gateway.api;

import dev.lazarus.gateway.config.LazarusProperties;
import dev.lazarus.gateway.config.LazarusProperties.ResponseModel;
import dev.lazarus.gateway.routing.ApiEndpoint;
import dev.lazarus.gateway.routing.Router;
import dev.lazarus.gateway.routing.ServedBy;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * {@code POST /v1/embeddings}, {@code /v1/rerank} (and {@code /rerank}), {@code /tokenize} and {@code /detokenize}:
 * the request checked for what routing needs, routed by its {@code model} to the backends that serve the endpoint,
 * and the backend's answer passed on with the response's {@code model} written over the server's (where it has one),
 * naming the backend that answered in {@value OpenAiController#SERVED_BY_HEADER}. Routed by
 * {@link OpenAiEndpointFilter}.
 */
@Component
public class JsonEndpointsController {

    private final RequestReader reader;
    private final Router router;
    private final ResponseWriter writer;
    private final ResponseModel responseModel;

    public JsonEndpointsController(RequestReader reader, Router router, ResponseWriter writer,
            LazarusProperties properties) {
        this.reader = reader;
        this.router = router;
        this.writer = writer;
        this.responseModel = properties.routing().responseModel();
    }

    public Mono<Void> serve(ApiEndpoint endpoint, ServerWebExchange exchange) {
        return reader.read(exchange.getRequest(), Map.class).flatMap(read -> {
            @SuppressWarnings("unchecked")
            Map<String, Object> request = (Map<String, Object>) read;
            String model = validate(endpoint, request);
            ServedBy served = new ServedBy();
            Runnable header = () -> {
                if (!served.isEmpty()) {
                    exchange.getResponse().getHeaders().set(OpenAiController.SERVED_BY_HEADER, served.ids());
                }
            };
            Mono<Map<String, Object>> answer = router.json(endpoint, request).contextWrite(served::into).map(body -> {
                if (body.containsKey("model")) {
                    body = new LinkedHashMap<>(body);
                    body.put("model", responseModel == ResponseModel.REQUESTED ? model : served.currentModel(model));
                }
                return body;
            });
            return writer.json(exchange.getResponse(), answer, header);
        });
    }

    /** The request's model; a 400 naming the first required field that is missing. */
    private static String validate(ApiEndpoint endpoint, Map<String, Object> request) {
        if (!(request.get("model") instanceof String model) || model.isBlank()) {
            throw ApiError.invalidRequest("Missing required parameter: 'model'.", "model");
        }
        List<String> required = switch (endpoint) {
            case EMBEDDINGS -> List.of("input");
            case RERANK -> List.of("query", "documents");
            case TOKENIZE -> List.of("content");
            case DETOKENIZE -> List.of("tokens");
            case CHAT_COMPLETIONS, COMPLETIONS, RESPONSES, MESSAGES, MESSAGES_COUNT_TOKENS ->
                    throw new IllegalArgumentException(endpoint + " is not served here");
        };
        for (String field : required) {
            if (request.get(field) == null) {
                throw ApiError.invalidRequest("Missing required parameter: '" + field + "'.", field);
            }
        }
        if (endpoint == ApiEndpoint.EMBEDDINGS && request.get("encoding_format") != null
                && !List.of("float", "base64").contains(request.get("encoding_format"))) {
            throw ApiError.invalidValue("Invalid value for 'encoding_format': expected 'float' or 'base64'.",
                    "encoding_format");
        }
        return model;
    }
}
