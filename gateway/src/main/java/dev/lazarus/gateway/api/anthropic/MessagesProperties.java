package dev.lazarus.gateway.api.anthropic;

import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * The Messages API's settings, under {@code lazarus.messages.*}.
 *
 * @param maxTokens the deployment's generation cap: a request's {@code max_tokens} above it is lowered to it
 *                  (agents such as Claude Code ask for 32k); an answer the cap ends is the server's whole turn
 *                  ({@code end_turn}), since the client's own limit was not reached. 0: none
 * @param pingInterval how long a stream waits for the backend's first token before the gateway begins the message
 *                     ({@code message_start}) and sends a {@code ping}, and then between pings until the answer
 *                     comes: clients give up on a response that has not begun (a long prompt on a CPU takes
 *                     minutes). 0: never, the stream begins with the answer
 */
@Validated
@ConfigurationProperties(prefix = "lazarus.messages")
public record MessagesProperties(
        @DefaultValue("0") @Min(0) int maxTokens,
        @DefaultValue("10s") @NotNull Duration pingInterval) {

    public MessagesProperties {
        if (pingInterval.isNegative()) {
            throw new IllegalArgumentException("lazarus.messages.ping-interval must not be negative");
        }
    }
}
