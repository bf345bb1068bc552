package dev.lazarus.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import tools.jackson.databind.json.JsonMapper;

/** A whole answer's identity values are written as the mapper writes them, byte for byte. */
class ResponseWriterJsonStringTest {

    private final JsonMapper json = JsonMapper.builder().build();

    @ParameterizedTest
    @ValueSource(strings = {"chatcmpl-AbC123", "", "qwën3 \"30B\" \\ a/b", "tab\tnew\nline\u0001\u001f\u007f",
            "emoji \uD83D\uDE00 and \u2028\u2029", "</script>"})
    void aStringIsQuotedAsTheMapperQuotesIt(String value) {
        byte[] written = ResponseWriter.jsonString(value);
        assertThat(new String(written, StandardCharsets.UTF_8))
                .isEqualTo(new String(json.writeValueAsBytes(value), StandardCharsets.UTF_8));
        assertThat(json.readValue(written, String.class)).isEqualTo(value);
    }
}
