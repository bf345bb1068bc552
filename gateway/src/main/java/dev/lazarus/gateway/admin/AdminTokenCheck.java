package dev.lazarus.gateway.admin;

import dev.lazarus.gateway.config.GatewayConfigException;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** At start: an admin token too short to resist guessing stops the gateway; one that is also an API key is warned of. */
final class AdminTokenCheck {

    private static final Logger log = LoggerFactory.getLogger(AdminTokenCheck.class);

    private AdminTokenCheck() {}

    static void check(AdminProperties admin, AdminGuardProperties guard, List<String> apiKeys) {
        if (!admin.enabled()) {
            return;
        }
        if (admin.token().length() < guard.minTokenLength()) {
            throw new GatewayConfigException("lazarus.admin.token is " + admin.token().length()
                    + " characters long; it must have at least " + guard.minTokenLength()
                    + " (lazarus.admin.guard.min-token-length): use a long random token");
        }
        if (apiKeys.contains(admin.token())) {
            log.warn("lazarus.admin.token is also one of lazarus.security.api-keys: every client of /v1 can use "
                    + "the admin API; give the admin API a token of its own");
        }
    }
}
