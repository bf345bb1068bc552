package dev.lazarus.llamacpp.http;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class UpstreamAddressTest {

    @Test
    void aPlainUrlBecomesHostPortAndRelativePaths() {
        UpstreamAddress a = UpstreamAddress.of("http://127.0.0.1:8080");
        assertThat(a.host()).isEqualTo("127.0.0.1");
        assertThat(a.port()).isEqualTo(8080);
        assertThat(a.secure()).isFalse();
        assertThat(a.path("/v1/chat/completions")).isEqualTo("/v1/chat/completions");
    }

    @Test
    void aPathPrefixGoesBeforeEveryPathAndDefaultPortsFollowTheScheme() {
        UpstreamAddress a = UpstreamAddress.of("https://example.org/openai/");
        assertThat(a.port()).isEqualTo(443);
        assertThat(a.secure()).isTrue();
        assertThat(a.path("/v1/models")).isEqualTo("/openai/v1/models");
        assertThat(UpstreamAddress.of("http://example.org").port()).isEqualTo(80);
    }

    @Test
    void anIpv6LiteralLosesItsBrackets() {
        assertThat(UpstreamAddress.of("http://[::1]:9000").host()).isEqualTo("::1");
    }

    @Test
    void whatItCannotTakeApartIsLeftToTheWholeUrl() {
        UpstreamAddress withUser = UpstreamAddress.of("http://user:secret@example.org:8080");
        assertThat(withUser.host()).isNull();
        assertThat(withUser.path("/health")).isEqualTo("/health");
        assertThat(UpstreamAddress.of("http://example.org/?x=1").host()).isNull();
    }
}
