package dev.lazarus.llamacpp.wire;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.Redactor;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

/** llama-server's error text reaches a {@link dev.lazarus.backend.api.BackendException} only redacted. */
class UpstreamErrorsRedactionTest {

    private static final String KEY = "sk-upstream-SECRET789";
    private final JsonMapper json = JsonMapper.builder().build();
    private final UpstreamErrors errors = new UpstreamErrors(json, Clock.fixed(Instant.EPOCH, ZoneOffset.UTC),
            Redactor.of(List.of(KEY)));

    @Test
    void jsonAndPlainErrorsCarryNoCredentials() {
        assertThat(errors.fromStatus(500, "{\"error\":{\"message\":\"bad auth Bearer " + KEY + "\"}}", null)
                .getMessage()).contains("bad auth Bearer ***").doesNotContain("SECRET");
        assertThat(errors.fromStatus(502, "proxy: header Authorization: Bearer " + KEY + " refused", null)
                .getMessage()).doesNotContain("SECRET");
        assertThat(errors.fromStatus(400, "key=" + KEY, null).getMessage()).doesNotContain("SECRET");
        assertThat(errors.fromStreamError(json.readTree(
                "{\"error\":{\"code\":500,\"message\":\"echo " + KEY + "\"}}")).getMessage())
                .doesNotContain("SECRET");
    }

    /** The finding: a 279-character text/plain body, then the key, was cut at 300 before redaction. */
    @Test
    void aKeyAcrossTheQuoteLimitIsRedactedBeforeTheCut() {
        String body = "y".repeat(279) + KEY + " and more text after it";
        String message = errors.fromStatus(400, body, null).getMessage();
        assertThat(message).doesNotContain("sk-upstream").doesNotContain("SECRET78").contains("***");
        String unknownKey = "z".repeat(285) + " Bearer qwertyuiopasdfgh";
        assertThat(errors.fromStatus(400, unknownKey, null).getMessage()).doesNotContain("qwertyui");
    }

    @Test
    void aMalformedStreamQuotesNoCredential() {
        Throwable parse = new RuntimeException("bad");
        try {
            json.readTree("{\"choices\": [ Bearer " + KEY + " ]");
        } catch (RuntimeException e) {
            parse = e;
        }
        assertThat(errors.fromThrowable(parse).getMessage()).doesNotContain("SECRET");
    }
}
