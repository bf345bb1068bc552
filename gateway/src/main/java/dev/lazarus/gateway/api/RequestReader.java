package dev.lazarus.gateway.api;

import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.CompletionRequest;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.server.reactive.ServerHttpRequest;
import reactor.core.publisher.Mono;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.ObjectReadContext;
import tools.jackson.core.StreamReadConstraints;
import tools.jackson.core.TokenStreamFactory;
import tools.jackson.core.exc.StreamConstraintsException;
import tools.jackson.core.exc.InputCoercionException;
import tools.jackson.core.exc.StreamReadException;
import tools.jackson.databind.DatabindException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.exc.MismatchedInputException;
import tools.jackson.databind.exc.ValueInstantiationException;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reads a JSON request body into a wire type: checks the media type and the size limit (from
 * {@code Content-Length} before reading, and while reading for chunked bodies), parses once, and
 * reports every problem as a 4xx {@link ApiError} naming the offending field in {@code param}. The
 * common chat and legacy completion requests are read by {@link RawBodyReader} (one streaming pass,
 * their bytes kept to be sent on); anything else, and every bad request, by data-binding.
 */
public final class RequestReader {

    private final JsonMapper json;
    /** The mapper's parser factory with our depth and token limits: Jackson's own allow 500 levels and any count. */
    private final TokenStreamFactory limited;
    private final int maxBodyBytes;
    private final RawBodyReader common;

    public RequestReader(JsonMapper json, long maxBodyBytes, int maxDepth, long maxTokens) {
        this.json = StrictScalars.of(json);
        this.limited = this.json.tokenStreamFactory().rebuild()
                .streamReadConstraints(StreamReadConstraints.builder()
                        .maxNestingDepth(maxDepth).maxTokenCount(maxTokens).build())
                .build();
        this.maxBodyBytes = (int) Math.min(Integer.MAX_VALUE, maxBodyBytes);
        this.common = new RawBodyReader(limited, this.json.readerFor(Object.class));
    }

    public <T> Mono<T> read(ServerHttpRequest request, Class<T> type) {
        return Mono.defer(() -> {
            JsonContentType.require(request.getHeaders());
            if (request.getHeaders().getContentLength() > maxBodyBytes) {
                return Mono.error(ErrorMapper.tooLarge());
            }
            return DataBufferUtils.join(request.getBody(), maxBodyBytes)
                    .switchIfEmpty(Mono.error(() -> ApiError.invalidRequest(
                            "The request body is empty: send a JSON object.", null)))
                    .map(buffer -> {
                        byte[] body = new byte[buffer.readableByteCount()];
                        try {
                            buffer.read(body);
                        } finally {
                            DataBufferUtils.release(buffer);
                        }
                        Object read = type == ChatCompletionRequest.class ? common.read(body, new ChatRequestFields())
                                : type == CompletionRequest.class ? common.read(body, new CompletionRequestFields())
                                : null;
                        return read != null ? type.cast(read) : parse(body, type);
                    });
        });
    }

    private <T> T parse(byte[] body, Class<T> type) {
        T value;
        try {
            value = json.readerFor(type).readValue(parser(body));
        } catch (StreamConstraintsException e) {
            throw ApiError.invalidRequest("The JSON body of your request is too complex: "
                    + e.getOriginalMessage().replaceAll(" \\(from `.*`\\)|, from `.*`", "") + ".", null);
        } catch (InputCoercionException e) {
            // A number too large for its field (max_tokens: 1e20): the client's value, not its JSON.
            String param = param(e.getPath());
            throw param == null ? notJson(e) : ApiError.invalidValue("Invalid '" + param + "': "
                    + e.getOriginalMessage() + ".", param);
        } catch (StreamReadException e) {
            throw notJson(e);
        } catch (DatabindException e) {
            // The rare path: read the body again as a tree to say what the client sent at that place.
            throw fromBinding(e, () -> json.readTree(parser(body)));
        } catch (JacksonException e) {
            throw ApiError.invalidRequest("We could not read the JSON body of your request.", null);
        }
        if (value == null) {
            throw ApiError.invalidRequest("The request body must be a JSON object.", null);
        }
        return value;
    }

    private JsonParser parser(byte[] body) {
        return limited.createParser(ObjectReadContext.empty(), body);
    }

    private static ApiError notJson(StreamReadException e) {
        return ApiError.invalidRequest("We could not parse the JSON body of your request: "
                + e.getOriginalMessage() + ". Send a valid JSON object.", null);
    }

    private static ApiError fromBinding(DatabindException e, Supplier<JsonNode> body) {
        String param = param(e.getPath());
        if (param == null) {
            return ApiError.invalidRequest("The request body must be a JSON object.", null);
        }
        if (e instanceof ValueInstantiationException && e.getCause() != null && e.getCause().getMessage() != null) {
            return ApiError.invalidType(param, e.getCause().getMessage());
        }
        if (e instanceof MismatchedInputException mismatch && mismatch.getTargetType() != null) {
            // OpenAI's wording: "Invalid type for 'max_tokens': expected an integer, but got a string instead."
            String got = sent(body, e.getPath());
            return ApiError.invalidType(param, "expected " + describe(mismatch.getTargetType())
                    + (got == null ? "" : ", but got " + got + " instead"));
        }
        return ApiError.invalidType(param, "wrong type");
    }

    /** What the client sent at the path ("a string", "a decimal number", ...), or null if it cannot be told. */
    private static String sent(Supplier<JsonNode> body, List<JacksonException.Reference> path) {
        JsonNode node;
        try {
            node = body.get();
        } catch (JacksonException e) {
            return null;
        }
        for (JacksonException.Reference ref : path) {
            if (node == null) {
                return null;
            }
            node = ref.getPropertyName() != null ? node.get(ref.getPropertyName())
                    : ref.getIndex() >= 0 ? node.get(ref.getIndex()) : node;
        }
        if (node == null) {
            return null;
        }
        return switch (node.getNodeType()) {
            case STRING -> "a string";
            case NUMBER -> node.isIntegralNumber() ? "an integer" : "a decimal number";
            case BOOLEAN -> "a boolean";
            case ARRAY -> "an array";
            case OBJECT, POJO -> "an object";
            case NULL -> "null";
            default -> null;
        };
    }

    /** {@code messages[0].content} from Jackson's path. */
    static String param(List<JacksonException.Reference> path) {
        if (path == null || path.isEmpty()) {
            return null;
        }
        StringBuilder sb = new StringBuilder();
        for (JacksonException.Reference ref : path) {
            if (ref.getPropertyName() != null) {
                if (!sb.isEmpty()) {
                    sb.append('.');
                }
                sb.append(ref.getPropertyName());
            } else if (ref.getIndex() >= 0) {
                sb.append('[').append(ref.getIndex()).append(']');
            }
        }
        return sb.isEmpty() ? null : sb.toString();
    }

    private static String describe(Class<?> type) {
        if (type == String.class) {
            return "a string";
        }
        if (type == Boolean.class || type == boolean.class) {
            return "a boolean";
        }
        if (type == Integer.class || type == int.class || type == Long.class || type == long.class) {
            return "an integer";
        }
        if (Number.class.isAssignableFrom(type) || type.isPrimitive()) {
            return "a number";
        }
        if (Collection.class.isAssignableFrom(type) || type.isArray()) {
            return "an array";
        }
        if (Map.class.isAssignableFrom(type) || type.isRecord()) {
            return "an object";
        }
        return "a different type";
    }
}
