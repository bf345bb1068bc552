package dev.lazarus.gateway.config;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.gateway.routing.MidStreamMode;
import jakarta.validation.Valid;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotEmpty;
import jakarta.validation.constraints.NotNull;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.annotation.Validated;

/**
 * Everything a user configures under {@code lazarus.*}: the backends, the public models and
 * their fallback chains, API keys, request limits and routing timeouts.
 *
 * @param backends backends the gateway creates at start through the backend SPI
 * @param models   public model names and the ordered backends that serve them
 * @param security API keys for {@code /v1/**}
 * @param limits   request limits
 * @param routing  routing behaviour
 */
@Validated
@ConfigurationProperties(prefix = "lazarus")
public record LazarusProperties(
        @DefaultValue List<@Valid Backend> backends,
        @DefaultValue List<@Valid Model> models,
        @DefaultValue @Valid Security security,
        @DefaultValue @Valid Limits limits,
        @DefaultValue @Valid Routing routing) {

    /**
     * One backend instance.
     *
     * @param id       unique id, used in model routes, metrics and health
     * @param kind     backend kind as registered by its factory, e.g. {@code llamacpp} or {@code kt-native}
     * @param model    model name sent to this backend; when unset the public model name is sent
     * @param settings kind-specific settings, handed to the backend factory unchanged (kebab-case keys) but for
     *                 the default of the connection pool's size ({@code max-connections})
     */
    public record Backend(
            @NotBlank String id,
            @NotBlank String kind,
            String model,
            @DefaultValue Map<String, Object> settings) {

        /** Settings may hold an upstream api-key: printed as {@link BackendConfig} prints them, masked. */
        @Override
        public String toString() {
            return "Backend[model=" + model + ", " + new BackendConfig(id, kind, settings) + "]";
        }
    }

    /**
     * One public model.
     *
     * @param name            the name clients send as {@code model}
     * @param backends        backend ids in fallback order: the first healthy one serves
     * @param ownedBy         {@code owned_by} shown in {@code /v1/models}
     * @param overallTimeout  overrides {@code lazarus.routing.overall-timeout} for this model
     * @param midStream       what a client gets when its stream's backend fails after the first
     *                        token: {@code resume} on the next backend or an {@code error} event;
     *                        overrides {@code lazarus.resilience.mid-stream}
     * @param defaultMaxTokens the {@code max_tokens} a chat request (or a Responses request translated onto chat) gets
     *                         when it sets no limit of its own; unset: none (the backend's own, often "until the
     *                         context is full")
     */
    public record Model(
            @NotBlank String name,
            @NotEmpty List<@NotBlank String> backends,
            @DefaultValue("lazarus") String ownedBy,
            Duration overallTimeout,
            MidStreamMode midStream,
            @Min(1) Integer defaultMaxTokens) {}

    /**
     * @param apiKeys accepted bearer tokens for {@code /v1/**} and the client endpoints outside it ({@code /tokenize},
     *                {@code /detokenize}, {@code /rerank}); empty means no authentication
     */
    public record Security(@DefaultValue List<@NotBlank String> apiKeys) {

        /** Keys never reach a log line or a config dump, not even through {@code toString}. */
        @Override
        public String toString() {
            return "Security[apiKeys=" + apiKeys.size() + " configured]";
        }
    }

    /**
     * @param maxBodySize   largest request body accepted; bigger ones get 413 (checked while reading)
     * @param maxJsonDepth  deepest nesting of arrays and objects in a request body; deeper: 400
     * @param maxJsonTokens most JSON tokens (values, keys, brackets) in one request body, which bounds
     *                      the keys of an object and the elements of an array; more: 400
     */
    public record Limits(
            @DefaultValue("4MB") @NotNull DataSize maxBodySize,
            @DefaultValue("64") @Min(1) int maxJsonDepth,
            @DefaultValue("250000") @Min(1) long maxJsonTokens) {}

    /**
     * @param overallTimeout longest a whole request may take, streaming included
     * @param retryAfter     {@code Retry-After} sent with 503 when every backend of a route failed
     *                       and none said when to come back
     * @param responseModel  the {@code model} responses name: the model that answered ({@code served},
     *                       as gateways such as LiteLLM and Portkey report it) or the one the client asked for
     */
    public record Routing(
            @DefaultValue("10m") @NotNull Duration overallTimeout,
            @DefaultValue("5s") @NotNull Duration retryAfter,
            @DefaultValue("served") @NotNull ResponseModel responseModel) {}

    /** Which model name a response carries. */
    public enum ResponseModel {
        /** The model of the backend that answered (after a resume, of the one answering now). */
        SERVED,
        /** The public model name the client sent. */
        REQUESTED
    }
}
