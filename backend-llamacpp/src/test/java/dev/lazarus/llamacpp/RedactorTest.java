package dev.lazarus.llamacpp;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.databind.json.JsonMapper;

class RedactorTest {

    private final Redactor redactor = new Redactor("sk-upstream-1234");

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "invalid key sk-upstream-1234 given | invalid key *** given",
            "Authorization: Bearer abc.def-ghi | Authorization: Bearer ***",
            "authorization=Basic dXNlcjpwYXNz | authorization=Basic ***",
            "X-Api-Key: k-9876 rejected | X-Api-Key: *** rejected",
            "{\"api_key\":\"k-9876\"} | {\"api_key\":\"***\"}",
            "token=abc123; path=/ | token=***; path=/",
            "Loading model 'tiny.gguf' | Loading model 'tiny.gguf'",
            "tokenizer: 260 tokens | tokenizer: 260 tokens"})
    void credentialsAreMaskedAndTheRestKept(String in, String out) {
        assertThat(redactor.redact(in)).isEqualTo(out);
    }

    @Test
    void upstreamErrorsCarryNoCredentials() {
        UpstreamErrors errors = new UpstreamErrors(JsonMapper.builder().build(),
                Clock.fixed(Instant.EPOCH, ZoneOffset.UTC), redactor);
        assertThat(errors.fromStatus(500, "{\"error\":{\"message\":\"bad auth Bearer sk-upstream-1234\"}}", null)
                .getMessage()).contains("bad auth Bearer ***").doesNotContain("sk-upstream-1234");
        assertThat(errors.fromStatus(502, "proxy: header Authorization: Bearer sk-upstream-1234 refused", null)
                .getMessage()).doesNotContain("sk-upstream-1234");
        assertThat(errors.fromStreamError(JsonMapper.builder().build().readTree(
                "{\"error\":{\"code\":500,\"message\":\"echo sk-upstream-1234\"}}")).getMessage())
                .doesNotContain("sk-upstream-1234");
    }
}
