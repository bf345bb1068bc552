package dev.lazarus.gateway.admin;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The admin API, under {@code lazarus.admin.*}.
 *
 * @param token the bearer token every {@code /admin/**} request must carry; unset or blank turns
 *              the admin API off (403). It is never logged.
 */
@ConfigurationProperties(prefix = "lazarus.admin")
public record AdminProperties(String token) {

    public boolean enabled() {
        return token != null && !token.isBlank();
    }

    @Override
    public String toString() {
        return "AdminProperties[token=" + (enabled() ? "set" : "unset") + "]";
    }
}
