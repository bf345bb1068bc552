package dev.lazarus.gateway.admin;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Who may scrape {@code /actuator/prometheus}, under {@code lazarus.metrics.*}. The page shows backend ids,
 * models and live breaker states: it wants a token like the admin API.
 *
 * @param token the bearer token a scrape must carry; unset: the admin token is asked for instead, and with
 *              neither set the page is open (with a warning at start). Never logged.
 */
@ConfigurationProperties(prefix = "lazarus.metrics")
public record MetricsProperties(String token) {

    public boolean hasToken() {
        return token != null && !token.isBlank();
    }

    @Override
    public String toString() {
        return "MetricsProperties[token=" + (hasToken() ? "set" : "unset") + "]";
    }
}
