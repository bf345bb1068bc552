package dev.lazarus.llamacpp.wire;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.ContextLengthExceededException;
import io.netty.channel.ConnectTimeoutException;
import java.io.IOException;
import java.net.ConnectException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

class UpstreamErrorsTest {

    private static final Clock CLOCK = Clock.fixed(Instant.parse("2025-01-01T00:00:00Z"), ZoneOffset.UTC);
    private final JsonMapper json = JsonMapper.builder().build();
    private final UpstreamErrors errors = new UpstreamErrors(json, CLOCK);

    @Test
    void contextOverflowByTypeOrByMessage() {
        BackendException byType = errors.fromStatus(400, """
                {"error":{"code":400,"message":"request (5000 tokens) exceeds the available context size (4096 tokens), try increasing it",
                 "type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":4096}}""", null);
        assertThat(byType.kind()).isEqualTo(BackendErrorKind.CONTEXT_LENGTH_EXCEEDED);
        assertThat(byType.getMessage()).contains("exceeds the available context size");
        assertThat(byType).isInstanceOfSatisfying(ContextLengthExceededException.class, e -> {
            assertThat(e.promptTokens()).isEqualTo(5000);
            assertThat(e.contextSize()).isEqualTo(4096);
            assertThat(e.upstreamType()).isEqualTo("exceed_context_size_error");
            assertThat(e.upstreamCode()).isEqualTo("context_length_exceeded");
        });

        BackendException byMessage = errors.fromStatus(400,
                "{\"error\":{\"code\":400,\"message\":\"the request exceeds the available context size\",\"type\":\"invalid_request_error\"}}", null);
        assertThat(byMessage.kind()).isEqualTo(BackendErrorKind.CONTEXT_LENGTH_EXCEEDED);

        BackendException underLoad = errors.fromStatus(500,
                "{\"error\":{\"code\":500,\"message\":\"Context size has been exceeded.\",\"type\":\"server_error\"}}", null);
        assertThat(underLoad.kind()).isEqualTo(BackendErrorKind.CONTEXT_LENGTH_EXCEEDED);
    }

    @Test
    void aMissingPathKeepsItsStatusAndKind() {
        BackendException missing = errors.fromStatus(404,
                "{\"error\":{\"code\":404,\"message\":\"File Not Found\",\"type\":\"not_found_error\"}}", null);
        assertThat(missing).isInstanceOfSatisfying(MissingPathException.class, m -> {
            assertThat(m.status()).isEqualTo(404);
            assertThat(m.unknownModel()).isFalse();
        });
        assertThat(missing.kind()).isEqualTo(BackendErrorKind.MODEL_NOT_FOUND);
        assertThat(errors.fromStatus(405, "", null)).isInstanceOfSatisfying(MissingPathException.class,
                m -> assertThat(m.status()).isEqualTo(405)).extracting(BackendException::kind)
                .isEqualTo(BackendErrorKind.UPSTREAM);
        assertThat(errors.fromStatus(501, "{\"error\":{\"message\":\"not supported\"}}", null))
                .isInstanceOf(MissingPathException.class);
        assertThat(errors.fromStatus(404, "{\"error\":{\"message\":\"The model 'x' does not exist\","
                + "\"type\":\"invalid_request_error\",\"code\":\"model_not_found\"}}", null))
                .isInstanceOfSatisfying(MissingPathException.class, m -> assertThat(m.unknownModel()).isTrue());
        assertThat(errors.fromStatus(400, "{}", null)).isNotInstanceOf(MissingPathException.class);
    }

    @Test
    void statusesMapToKinds() {
        BackendException bad = errors.fromStatus(400, "{\"error\":{\"code\":400,\"message\":\"'messages' is required\",\"type\":\"invalid_request_error\"}}", null);
        assertThat(bad.kind()).isEqualTo(BackendErrorKind.INVALID_REQUEST);
        assertThat(bad.getMessage()).isEqualTo("'messages' is required");
        assertThat(errors.fromStatus(404, "{\"error\":{\"message\":\"model not found\"}}", null).kind()).isEqualTo(BackendErrorKind.MODEL_NOT_FOUND);
        assertThat(errors.fromStatus(401, "{\"error\":{\"message\":\"Invalid API Key\"}}", null).kind()).isEqualTo(BackendErrorKind.UNAVAILABLE);
        assertThat(errors.fromStatus(503, "{\"error\":{\"code\":503,\"message\":\"Loading model\",\"type\":\"unavailable_error\"}}", null))
                .satisfies(e -> assertThat(e.kind()).isEqualTo(BackendErrorKind.UNAVAILABLE))
                .hasMessageContaining("Loading model");
        BackendException crash = errors.fromStatus(502, "<html>bad gateway</html>", null);
        assertThat(crash.kind()).isEqualTo(BackendErrorKind.UPSTREAM);
        assertThat(crash.getMessage()).contains("502").contains("<html>bad gateway</html>");
        assertThat(errors.fromStatus(500, "", null).getMessage()).contains("(empty body)");
    }

    @Test
    void tooManyRequestsCarriesRetryAfter() {
        assertThat(errors.fromStatus(429, "{}", "7").retryAfter()).isEqualTo(Duration.ofSeconds(7));
        assertThat(errors.fromStatus(429, "{}", "Wed, 01 Jan 2025 00:00:30 GMT").retryAfter()).isEqualTo(Duration.ofSeconds(30));
        assertThat(errors.fromStatus(429, "{}", "Tue, 31 Dec 2024 23:00:00 GMT").retryAfter()).isEqualTo(Duration.ZERO);
        assertThat(errors.fromStatus(429, "{}", "soon").retryAfter()).isNull();
        assertThat(errors.fromStatus(429, "{}", null))
                .satisfies(e -> assertThat(e.kind()).isEqualTo(BackendErrorKind.OVERLOADED))
                .satisfies(e -> assertThat(e.retryAfter()).isNull());
    }

    @Test
    void errorsInsideTheStreamWrappedOrNot() {
        assertThat(errors.fromStreamError(json.readTree("{\"code\":500,\"message\":\"Context size has been exceeded.\",\"type\":\"server_error\"}")).kind())
                .isEqualTo(BackendErrorKind.CONTEXT_LENGTH_EXCEEDED);
        assertThat(errors.fromStreamError(json.readTree("{\"error\":{\"code\":500,\"message\":\"boom\",\"type\":\"server_error\"}}")))
                .satisfies(e -> assertThat(e.kind()).isEqualTo(BackendErrorKind.UPSTREAM))
                .hasMessageContaining("boom");
        assertThat(errors.fromStreamError(json.readTree("{\"error\":\"just text\"}")).kind()).isEqualTo(BackendErrorKind.UPSTREAM);
    }

    @Test
    void transportFailures() {
        assertThat(kindOf(errors.fromThrowable(new ConnectTimeoutException("slow")))).isEqualTo(BackendErrorKind.TIMEOUT);
        assertThat(kindOf(errors.fromThrowable(new ConnectException("Connection refused")))).isEqualTo(BackendErrorKind.UNAVAILABLE);
        assertThat(kindOf(errors.fromThrowable(new IOException("Connection reset by peer")))).isEqualTo(BackendErrorKind.UPSTREAM);
        assertThat(kindOf(errors.fromThrowable(new SseDecoder.MalformedStreamException("x")))).isEqualTo(BackendErrorKind.UPSTREAM);
        BackendException typed = BackendException.timeout("t");
        assertThat(errors.fromThrowable(typed)).isSameAs(typed);
    }

    private static BackendErrorKind kindOf(Throwable t) {
        assertThat(t).isInstanceOf(BackendException.class);
        return ((BackendException) t).kind();
    }
}
