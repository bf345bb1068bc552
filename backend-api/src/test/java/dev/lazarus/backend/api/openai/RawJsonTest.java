package dev.lazarus.backend.api.openai;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class RawJsonTest {

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Spans found by hand: the value of each field from its first byte to just after its last. */
    private static RawJson answer(String body) {
        int[] spans = {body.indexOf('{') + 1, -1, -1, -1, -1, -1, -1, -1, -1};
        String[] names = {"\"id\":", "\"created\":", "\"model\":"};
        for (int f = 0; f < 3; f++) {
            int at = body.indexOf(names[f]);
            if (at < 0) {
                continue;
            }
            int start = at + names[f].length();
            int end = body.charAt(start) == '"' ? body.indexOf('"', start + 1) + 1 : body.indexOf(',', start);
            spans[1 + 2 * f] = utf8(body.substring(0, start)).length;
            spans[2 + 2 * f] = utf8(body.substring(0, end)).length;
        }
        byte[] bytes = utf8(body);
        return new RawJson(bytes, 0, bytes.length, spans);
    }

    private static String rewritten(RawJson answer) {
        return new String(answer.withIdentity(utf8("\"chatcmpl-gw\""), utf8("42"), utf8("\"served \\\"m\\\"\"")),
                StandardCharsets.UTF_8);
    }

    @Test
    void writesTheIdentityOverTheServersAndLeavesEverythingElse() {
        String body = "{\"id\":\"up-1\",\"object\":\"chat.completion\",\"created\":1700000000,\"model\":\"ü-model\","
                + "\"choices\":[{\"message\":{\"content\":\"\\\"id\\\": not this\"}}],\"system_fingerprint\":\"fp\"}";
        assertThat(rewritten(answer(body))).isEqualTo(
                "{\"id\":\"chatcmpl-gw\",\"object\":\"chat.completion\",\"created\":42,\"model\":\"served \\\"m\\\"\","
                        + "\"choices\":[{\"message\":{\"content\":\"\\\"id\\\": not this\"}}],\"system_fingerprint\":\"fp\"}");
    }

    @Test
    void fieldsInAnyOrder() {
        String body = "{\"model\":\"x\",\"choices\":[],\"created\":7,\"id\":\"y\"}";
        assertThat(rewritten(answer(body)))
                .isEqualTo("{\"model\":\"served \\\"m\\\"\",\"choices\":[],\"created\":42,\"id\":\"chatcmpl-gw\"}");
    }

    @Test
    void aMissingFieldIsAddedAtTheStart() {
        String body = "{\"object\":\"chat.completion\",\"model\":\"x\",\"choices\":[]}";
        assertThat(rewritten(answer(body))).isEqualTo("{\"id\":\"chatcmpl-gw\",\"created\":42,"
                + "\"object\":\"chat.completion\",\"model\":\"served \\\"m\\\"\",\"choices\":[]}");
    }
}
