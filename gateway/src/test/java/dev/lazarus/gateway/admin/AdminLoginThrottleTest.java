package dev.lazarus.gateway.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.gateway.config.GatewayConfigException;
import dev.lazarus.gateway.policy.AuditEvent;
import dev.lazarus.gateway.policy.PolicyStore;
import dev.lazarus.gateway.testing.CapturedLogs;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * Issue 35: guessing the admin token is slowed per address and in all (429 with Retry-After, before the
 * token is looked at, so a right guess while waiting is refused too), the journal names the guesser's
 * address (X-Forwarded-For only from a trusted proxy), a short admin token stops the start, and an admin
 * token that is also an API key is warned of.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "lazarus.admin.token=" + AdminLoginThrottleTest.TOKEN,
        "lazarus.admin.guard.failures-before-backoff=3", "lazarus.admin.guard.backoff=20s",
        "lazarus.admin.guard.global-failures-per-minute=12",
        "lazarus.admin.guard.trusted-proxies[0]=127.0.0.1"})
@ActiveProfiles("test")
@AutoConfigureWebTestClient
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class AdminLoginThrottleTest {

    static final String TOKEN = "throttle-admin-Q7x2p9Lm";

    @Autowired
    WebTestClient client;

    @Autowired
    PolicyStore store;

    private WebTestClient.ResponseSpec backends(String from, String token) {
        return client.get().uri("/admin/backends").header("X-Forwarded-For", "203.0.113.250, " + from)
                .header("Authorization", "Bearer " + token).exchange();
    }

    @Test
    @Order(1)
    void anAddressThatKeepsGuessingWaitsEvenWithTheRightTokenWhileOthersGoOn() {
        for (int i = 0; i < 3; i++) {
            backends("198.51.100.7", "guess-" + i).expectStatus().isUnauthorized();
        }
        backends("198.51.100.7", "guess-3").expectStatus().isEqualTo(429)
                .expectHeader().value("Retry-After", v -> assertThat(Long.parseLong(v)).isBetween(15L, 20L))
                .expectBody().jsonPath("$.error.code").isEqualTo("rate_limit_exceeded");
        backends("198.51.100.7", TOKEN).expectStatus().isEqualTo(429);
        backends("198.51.100.8", TOKEN).expectStatus().isOk();

        List<AuditEvent> failed = store.newestEvents(0, 50).stream()
                .filter(e -> e.action().equals("admin-login-failed")).toList();
        assertThat(failed).isNotEmpty();
        // the client's address as the trusted proxy saw it, never the forged first entry
        assertThat(failed.getFirst().reason()).contains("198.51.100.7").doesNotContain("203.0.113.250")
                .doesNotContain("guess-");
    }

    @Test
    @Order(2)
    void guessesSpreadOverManyAddressesMakeEveryAddressWait() {
        // 3 failures so far this minute; 9 more from as many addresses reach the limit of 12.
        for (int i = 0; i < 9; i++) {
            backends("192.0.2." + i, "guess").expectStatus().isUnauthorized();
        }
        backends("192.0.2.200", TOKEN).expectStatus().isEqualTo(429).expectHeader().exists("Retry-After");
    }

    @Test
    void anUntrustedPeerCannotChooseItsAddress() {
        ClientAddress none = new ClientAddress(List.of());
        var request = org.springframework.mock.http.server.reactive.MockServerHttpRequest.get("/admin/backends")
                .remoteAddress(new java.net.InetSocketAddress("10.1.2.3", 4000))
                .header("X-Forwarded-For", "198.51.100.1").build();
        assertThat(none.of(request)).isEqualTo("10.1.2.3");
        assertThat(new ClientAddress(List.of("10.1.2.3")).of(request)).isEqualTo("198.51.100.1");
    }

    @Test
    void aShortAdminTokenStopsTheStartAndOneThatIsAnApiKeyIsWarnedOf() {
        AdminGuardProperties guard = new AdminGuardProperties(12, 5, Duration.ofSeconds(1), Duration.ofMinutes(5), 600,
                List.of());
        assertThatThrownBy(() -> AdminTokenCheck.check(new AdminProperties("x"), guard, List.of()))
                .isInstanceOf(GatewayConfigException.class)
                .hasMessage("lazarus.admin.token is 1 characters long; it must have at least 12 "
                        + "(lazarus.admin.guard.min-token-length): use a long random token");
        CapturedLogs logs = new CapturedLogs().start(List.of());
        try {
            AdminTokenCheck.check(new AdminProperties("shared-key-0123456789"), guard, List.of("shared-key-0123456789"));
        } finally {
            logs.stop();
        }
        assertThat(logs.events()).anySatisfy(e -> assertThat(e.getFormattedMessage())
                .contains("lazarus.admin.token is also one of lazarus.security.api-keys")
                .doesNotContain("shared-key-0123456789"));
    }
}
