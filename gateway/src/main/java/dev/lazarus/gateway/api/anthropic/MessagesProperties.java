package dev.lazarus.gateway.api.anthropic;

import jakarta.validation.constraints.Min;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * The Messages API's settings, under {@code lazarus.messages.*}.
 *
 * @param maxTokens the deployment's generation cap: a request's {@code max_tokens} above it is lowered to it
 *                  (agents such as Claude Code ask for 32k); an answer the cap ends is the server's whole turn
 *                  ({@code end_turn}), since the client's own limit was not reached. 0: none
 */
@Validated
@ConfigurationProperties(prefix = "lazarus.messages")
public record MessagesProperties(@DefaultValue("0") @Min(0) int maxTokens) {}
