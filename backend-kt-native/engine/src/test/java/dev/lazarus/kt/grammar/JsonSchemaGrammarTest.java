package dev.lazarus.kt.grammar;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.InputStream;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

/**
 * The schema → GBNF conversion writes the grammar text llama-server b11669 writes: the fixture holds schemas and
 * the grammar llama-server reported for each ({@code generation_settings.grammar} of a {@code /completion} with
 * {@code json_schema}), or its 400. The tools module's live test asks a running llama-server the same.
 */
class JsonSchemaGrammarTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> fixture() throws Exception {
        try (InputStream in = JsonSchemaGrammarTest.class.getResourceAsStream("/grammar/llama-server-schemas.json")) {
            return JSON.readValue(in, List.class);
        }
    }

    @Test
    void writesTheGrammarLlamaServerWrites() throws Exception {
        List<Map<String, Object>> cases = fixture();
        assertThat(cases).hasSizeGreaterThan(30);
        for (Map<String, Object> c : cases) {
            String expected = (String) c.get("grammar");
            if (expected.startsWith("ERROR 400")) {
                assertThatThrownBy(() -> JsonSchemaGrammar.convert(c.get("schema")))
                        .as("schema %s", JSON.writeValueAsString(c.get("schema")))
                        .isInstanceOf(GrammarException.class);
                continue;
            }
            String ours = JsonSchemaGrammar.convert(c.get("schema"));
            assertThat(ours).as("schema %s", JSON.writeValueAsString(c.get("schema"))).isEqualTo(expected);
            Grammar.parse(ours); // and it is a grammar our parser takes
        }
    }

    @Test
    void refusesWhatLlamaServerRefuses() {
        assertThatThrownBy(() -> JsonSchemaGrammar.convert(Map.of("type", "foo")))
                .hasMessageContaining("unrecognized type foo");
        assertThatThrownBy(() -> JsonSchemaGrammar.convert(Map.of("$ref", "#/$defs/missing")))
                .hasMessageContaining("cannot resolve $ref #/$defs/missing");
        assertThatThrownBy(() -> JsonSchemaGrammar.convert(Map.of("type", "string", "pattern", "^(ab$")))
                .hasMessageContaining("unbalanced parentheses");
        assertThatThrownBy(() -> JsonSchemaGrammar.convert(true)).hasMessageContaining("schema must be an object");
    }

    @Test
    void patternsItCannotTranslateAllowAnyString() {
        String any = JsonSchemaGrammar.convert(Map.of("type", "string", "pattern", "^\\d+$"));
        assertThat(any).contains("root ::= string\n");
        String translated = JsonSchemaGrammar.convert(Map.of("type", "string", "pattern", "^[a-z]{2,}\\.x$"));
        assertThat(translated).contains("root ::= \"\\\"\" (root-1{2,} \".x\") \"\\\"\"\n", "root-1 ::= [a-z]\n");
    }

    @Test
    void writesNumbersAsLlamaCppDoes() {
        assertThat(JsonText.number(1.5)).isEqualTo("1.5");
        assertThat(JsonText.number(2.0)).isEqualTo("2.0");
        assertThat(JsonText.number(1e20)).isEqualTo("1e+20");
        assertThat(JsonText.number(0.0001)).isEqualTo("0.0001");
        assertThat(JsonText.number(1.25e-7)).isEqualTo("1.25e-07");
        assertThat(JsonText.dump(Map.of("a", List.of(1, "x\n", true)))).isEqualTo("{\"a\":[1,\"x\\n\",true]}");
    }
}
