package dev.lazarus.gateway.admin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.gateway.policy.Actor;
import dev.lazarus.gateway.policy.AuditEvent;
import dev.lazarus.gateway.policy.PolicyStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpHeaders;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;

/** Issue 17 (9): failed admin logins are journalled, without the token, at most once per window. */
class FailedAdminLoginsTest {

    private final PolicyStore store = PolicyStore.inMemory();
    private Instant now = Instant.parse("2026-11-26T06:00:00Z");
    private final FailedAdminLogins logins = new FailedAdminLogins(store, new Clock() {
        @Override
        public java.time.ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    });

    @AfterEach
    void close() {
        store.close();
    }

    @Test
    void journalledWithoutTheTokenOncePerWindowCountingTheRest() {
        MockServerHttpRequest wrong = MockServerHttpRequest.post("/admin/backends/a/promote")
                .header(HttpHeaders.AUTHORIZATION, "Bearer guessed-token-123456").build();
        logins.failed(wrong, "10.0.0.66", "wrong token").block(Duration.ofSeconds(5));
        logins.failed(wrong, "10.0.0.66", "wrong token").block(Duration.ofSeconds(5));
        logins.failed(wrong, "10.0.0.66", "wrong token").block(Duration.ofSeconds(5));
        now = now.plus(FailedAdminLogins.WINDOW);
        logins.failed(wrong, "10.0.0.2", "missing token").block(Duration.ofSeconds(5));

        List<AuditEvent> events = store.newestEvents(0, 10);
        assertThat(events).hasSize(2).allSatisfy(event -> {
            assertThat(event.actor()).isEqualTo(Actor.UNAUTHENTICATED);
            assertThat(event.action()).isEqualTo("admin-login-failed");
            assertThat(event.backendId()).isNull();
            assertThat(event.reason()).contains("POST /admin/backends/a/promote").doesNotContain("guessed-token");
        });
        assertThat(((Number) events.get(1).figures().get("failures")).longValue()).isEqualTo(1L);
        assertThat(events.get(0).reason()).contains("missing token");
        assertThat(((Number) events.get(0).figures().get("failures")).longValue()).isEqualTo(3L);
        // Issue 35: the entry names the guesser's failures, not only the innocent caller who failed next.
        assertThat(events.get(0).reason()).contains("2 from 10.0.0.66, 1 from 10.0.0.2");
    }
}
