package dev.lazarus.llamacpp.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.WholeAnswer;
import dev.lazarus.backend.api.openai.Usage;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

class WholeAnswerReaderTest {

    private final JsonMapper json = JsonMapper.builder().build();
    private final WholeAnswerReader reader = new WholeAnswerReader(json, new UpstreamErrors(json, Clock.systemUTC()));

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String value(WholeAnswer a, int field) {
        int start = a.json().spans()[1 + 2 * field];
        return start < 0 ? null
                : new String(a.json().bytes(), start, a.json().spans()[2 + 2 * field] - start, StandardCharsets.UTF_8);
    }

    @Test
    void findsTheIdentityValuesUsageAndGenerationTime() {
        // llama-server's shape: timings at the end, an escaped quote in the id, a non-ASCII model name.
        WholeAnswer a = reader.read(utf8("""
                { "choices":[{"finish_reason":"stop","index":0,"message":{"role":"assistant","content":"hi \\"there\\""}}],
                  "created" : 1764000000, "model":"qwën.gguf", "system_fingerprint":"b7000-abc",
                  "object":"chat.completion","usage":{"completion_tokens":5,"prompt_tokens":12,"total_tokens":17,
                  "prompt_tokens_details":{"cached_tokens":4}},"id":"chatcmpl-a\\"b",
                  "timings":{"cache_n":4,"prompt_n":8,"prompt_ms":10.5,"predicted_n":5,"predicted_ms":80.25}}"""));

        assertThat(value(a, 0)).isEqualTo("\"chatcmpl-a\\\"b\"");
        assertThat(value(a, 1)).isEqualTo("1764000000");
        assertThat(value(a, 2)).isEqualTo("\"qwën.gguf\"");
        assertThat(a.json().spans()[0]).isEqualTo(1);
        assertThat(a.usage().promptTokens()).isEqualTo(12);
        assertThat(a.usage().completionTokens()).isEqualTo(5);
        assertThat(a.usage().promptTokensDetails()).containsEntry("cached_tokens", 4);
        assertThat(a.generationNanos()).isEqualTo(80_250_000L);
        String out = new String(a.json().withIdentity(utf8("\"gw\""), utf8("1"), utf8("\"m\"")), StandardCharsets.UTF_8);
        assertThat(json.readTree(out).get("id").asString()).isEqualTo("gw");
        assertThat(json.readTree(out).get("model").asString()).isEqualTo("m");
        assertThat(json.readTree(out).at("/choices/0/message/content").asString()).isEqualTo("hi \"there\"");
    }

    /**
     * Read by hand where it is the three counts as plain ints, by the mapper otherwise: always what the mapper
     * makes of it, an error included (a count missing, null, too big or not a number).
     */
    @Test
    void usageIsWhatTheMapperMakesOfIt() {
        for (String usage : new String[] {
                "{\"completion_tokens\":5,\"prompt_tokens\":12,\"total_tokens\":17}",
                "{\"total_tokens\":3,\"prompt_tokens\":1,\"completion_tokens\":2,\"prompt_tokens\":7}",
                "{\"prompt_tokens\":\"4\",\"completion_tokens\":2.0,\"total_tokens\":6}",
                "{\"prompt_tokens\":1,\"completion_tokens\":2,\"total_tokens\":3,\"completion_tokens_details\":{\"reasoning_tokens\":1}}",
                "{\"prompt_tokens\":1,\"extra\":[1,{\"a\":2}],\"completion_tokens\":2,\"total_tokens\":3}",
                "{\"prompt_tokens\":1117,\"completion_tokens\":20,\"total_tokens\":1137,"
                        + "\"prompt_tokens_details\":{\"cached_tokens\":1024,\"audio_tokens\":0},"
                        + "\"completion_tokens_details\":{\"reasoning_tokens\":0,\"x\":[1.5,{\"y\":null}],\"s\":\"t\"}}",
                "{\"prompt_tokens_details\":null,\"prompt_tokens\":1,\"completion_tokens\":2,\"total_tokens\":3,"
                        + "\"completion_tokens_details\":{}}",
                "{\"prompt_tokens\":1,\"completion_tokens\":2,\"total_tokens\":3,\"prompt_tokens_details\":{\"a\":1},"
                        + "\"prompt_tokens_details\":{\"b\":2}}",
                "{\"prompt_tokens\":1,\"completion_tokens\":2,\"total_tokens\":3,\"prompt_tokens_details\":[]}",
                "{\"prompt_tokens\":1,\"completion_tokens\":2,\"total_tokens\":3,\"prompt_tokens_details\":5}",
                "{\"prompt_tokens\":4}", "{}",
                "{\"prompt_tokens\":null,\"completion_tokens\":2,\"total_tokens\":2}",
                "{\"prompt_tokens\":\"many\",\"completion_tokens\":2,\"total_tokens\":2}",
                "{\"prompt_tokens\":99999999999,\"completion_tokens\":2,\"total_tokens\":2}", "[1]"}) {
            byte[] answer = utf8("{\"id\":\"x\",\"usage\":" + usage + ",\"model\":\"m\"}");
            Usage expected;
            try {
                expected = json.readValue(usage, Usage.class);
            } catch (RuntimeException refused) {
                assertThatThrownBy(() -> reader.read(answer)).as(usage)
                        .isInstanceOfSatisfying(BackendException.class,
                                e -> assertThat(e.kind()).isEqualTo(BackendErrorKind.UPSTREAM));
                continue;
            }
            WholeAnswer a = reader.read(answer);
            assertThat(a.usage()).as(usage).isEqualTo(expected);
            assertThat(value(a, 2)).as(usage).isEqualTo("\"m\"");
        }
    }

    @Test
    void withoutUsageOrTimings() {
        WholeAnswer a = reader.read(utf8("{\"object\":\"chat.completion\",\"choices\":[]}"));
        assertThat(a.usage()).isNull();
        assertThat(a.generationNanos()).isEqualTo(-1);
        assertThat(a.json().spans()).containsExactly(1, -1, -1, -1, -1, -1, -1, -1, -1);
    }

    @Test
    void anErrorObjectIsTheUpstreamsError() {
        assertThatThrownBy(() -> reader.read(utf8("{\"error\":{\"code\":503,\"message\":\"Loading model\"}}")))
                .isInstanceOfSatisfying(BackendException.class,
                        e -> assertThat(e.kind()).isEqualTo(BackendErrorKind.UNAVAILABLE));
    }

    @Test
    void brokenJsonIsAnUpstreamFailure() {
        for (String body : new String[] {"{\"id\":\"x\",", "[1]", "{} {}", "not json"}) {
            assertThatThrownBy(() -> reader.read(utf8(body))).as(body)
                    .isInstanceOfSatisfying(BackendException.class,
                            e -> assertThat(e.kind()).isEqualTo(BackendErrorKind.UPSTREAM));
        }
    }
}
