package dev.lazarus.kt.grammar;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The grammars llama-server (b11669) builds for chat answers of a template without reasoning or tools, after its
 * generation prompt (which it feeds to the grammar first, so the rule starts where the answer starts).
 */
public final class ChatGrammars {

    private ChatGrammars() {}

    /**
     * A {@code response_format} (or {@code json_schema}) answer: the value, optionally in a json code fence, with
     * whitespace around it.
     */
    public static String responseFormat(Object schema) {
        Map<String, String> extra = new LinkedHashMap<>();
        extra.put("response-format", "response-format-schema");
        extra.put("root", "space space (\"```json\" space response-format space \"```\" | space response-format space)");
        return JsonSchemaGrammar.convert(schema, "response-format-schema", extra);
    }
}
