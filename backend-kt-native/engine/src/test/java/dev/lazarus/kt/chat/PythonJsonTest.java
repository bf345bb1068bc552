package dev.lazarus.kt.chat;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.ZonedDateTime;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PythonJsonTest {

    @Test
    void writesLikeJsonDumpsWithEnsureAsciiOff() {
        Map<String, Object> map = new LinkedHashMap<>();
        map.put("text", "héllo \"q\"\n\t\u0001");
        map.put("n", 3);
        map.put("x", 1.5);
        map.put("whole", 2.0);
        map.put("ok", true);
        map.put("none", null);
        map.put("list", List.of(1, "two"));
        map.put("empty", Map.of());
        assertThat(PythonJson.dumps(map, null)).isEqualTo("{\"text\": \"héllo \\\"q\\\"\\n\\t\\u0001\", \"n\": 3, \"x\": 1.5, "
                + "\"whole\": 2.0, \"ok\": true, \"none\": null, \"list\": [1, \"two\"], \"empty\": {}}");
    }

    @Test
    void indentPutsEachItemOnItsOwnLine() {
        assertThat(PythonJson.dumps(Map.of("a", Arrays.asList(1, null)), 2)).isEqualTo("{\n  \"a\": [\n    1,\n    null\n  ]\n}");
        assertThat(PythonJson.dumps(List.of(), 2)).isEqualTo("[]");
    }

    @Test
    void strftimeKnowsTheCommonDirectives() {
        ZonedDateTime t = ZonedDateTime.parse("2024-07-06T15:04:05Z");
        assertThat(TemplateFunctions.strftime(t, "%d %b %Y|%B %m %y|%H:%M:%S %I%p|%A %a|%j|%%"))
                .isEqualTo("06 Jul 2024|July 07 24|15:04:05 03PM|Saturday Sat|188|%");
    }
}
