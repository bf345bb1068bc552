package dev.lazarus.llamacpp.wire;

import java.time.Clock;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;

/** The HTTP {@code Retry-After} header: delay-seconds or an HTTP-date (RFC 9110 §10.2.3). */
final class RetryAfter {

    private RetryAfter() {}

    /** The delay it asks for, never negative; null when the header is absent or unreadable. */
    static Duration parse(String value, Clock clock) {
        if (value == null || value.isBlank()) {
            return null;
        }
        String v = value.strip();
        if (v.chars().allMatch(Character::isDigit)) {
            try {
                return Duration.ofSeconds(Long.parseLong(v));
            } catch (NumberFormatException tooLarge) {
                return null;
            }
        }
        try {
            ZonedDateTime at = ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME);
            Duration d = Duration.between(clock.instant(), at.toInstant());
            return d.isNegative() ? Duration.ZERO : d;
        } catch (DateTimeParseException e) {
            return null;
        }
    }
}
