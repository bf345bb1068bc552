package dev.lazarus.kt.grammar;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * A JSON schema as GBNF, by the rules of llama.cpp's {@code json_schema_to_grammar}: the same rule names and texts
 * (so the grammar text can be compared with llama-server's), {@code $ref} into the schema's own {@code $defs} or
 * {@code definitions}, {@code anyOf}/{@code oneOf} as alternatives, {@code allOf} merging object properties or
 * intersecting enums, {@code additionalProperties} (absent means none allowed, as there), {@code min/maxLength},
 * {@code min/maxItems}, integer bounds, the {@code date}, {@code time}, {@code date-time} and {@code uuid} formats,
 * and {@code pattern}. A schema it cannot convert is a {@link GrammarException} listing every reason.
 */
public final class JsonSchemaGrammar {

    private static final Pattern INVALID_RULE_CHARS = Pattern.compile("[^a-zA-Z0-9-]+");
    private static final Pattern UUID_FORMAT = Pattern.compile("uuid[1-5]?");

    private final Map<String, String> rules = new TreeMap<>();
    private final Map<String, Object> refs = new HashMap<>();
    private final Set<String> resolving = new HashSet<>();
    private final List<String> errors = new ArrayList<>();

    private JsonSchemaGrammar() {
        rules.put("space", SchemaRules.SPACE);
    }

    /** The grammar of documents valid under {@code schema} (maps, lists and scalars as a JSON reader gives them). */
    public static String convert(Object schema) {
        return convert(schema, "", Map.of());
    }

    /**
     * The schema's rules under {@code name} (its own rule is {@code name}, "" meaning {@code root}), with
     * {@code extraRules} added as the chat formats add theirs.
     */
    static String convert(Object schema, String name, Map<String, String> extraRules) {
        return build(c -> {
            c.schema(schema, name);
            extraRules.forEach(c::addRule);
        });
    }

    /** A grammar made of schemas and rules added by {@code body}; all reasons for refusing it at once. */
    static String build(java.util.function.Consumer<JsonSchemaGrammar> body) {
        JsonSchemaGrammar c = new JsonSchemaGrammar();
        body.accept(c);
        if (!c.errors.isEmpty()) {
            throw new GrammarException("JSON schema conversion failed:\n" + String.join("\n", c.errors));
        }
        StringBuilder out = new StringBuilder();
        c.rules.forEach((rule, text) -> out.append(rule).append(" ::= ").append(text).append('\n'));
        return out.toString();
    }

    /** Adds a schema's rules under {@code name}; returns its rule name. */
    String schema(Object schema, String name) {
        Object copy = SchemaRefs.deepCopy(schema);
        SchemaRefs.resolve(copy, refs, errors);
        return visit(copy, name);
    }

    void error(String message) {
        errors.add(message);
    }

    /** Adds a rule under a cleaned name; a different rule under a taken name gets a number appended. */
    String addRule(String name, String rule) {
        String esc = INVALID_RULE_CHARS.matcher(name).replaceAll("-");
        if (!rules.containsKey(esc) || rules.get(esc).equals(rule)) {
            rules.put(esc, rule);
            return esc;
        }
        int i = 0;
        while (rules.containsKey(esc + i) && !rules.get(esc + i).equals(rule)) {
            i++;
        }
        String key = esc + i;
        rules.put(key, rule);
        return key;
    }

    private String addPrimitive(String name, SchemaRules.Builtin rule) {
        String n = addRule(name, rule.content());
        for (String dep : rule.deps()) {
            SchemaRules.Builtin depRule = SchemaRules.builtin(dep);
            if (depRule == null) {
                error("Rule " + dep + " not known");
            } else if (!rules.containsKey(dep)) {
                addPrimitive(dep, depRule);
            }
        }
        return n;
    }

    /** A builtin JSON rule by its own name, with the rules it needs. */
    String visitPrimitive(String name) {
        return addPrimitive(name, SchemaRules.PRIMITIVES.get(name));
    }

    private String resolveRef(String ref) {
        int hash = ref.indexOf('#');
        String fragment = hash >= 0 ? ref.substring(hash + 1) : ref;
        String refName = "ref" + INVALID_RULE_CHARS.matcher(fragment).replaceAll("-");
        if (!rules.containsKey(refName) && !resolving.contains(ref)) {
            resolving.add(ref);
            refName = visit(refs.get(ref), refName);
            resolving.remove(ref);
        }
        return refName;
    }

    private String union(String name, List<?> alternatives) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < alternatives.size(); i++) {
            out.add(visit(alternatives.get(i), name + (name.isEmpty() ? "alternative-" : "-") + i));
        }
        return String.join(" | ", out);
    }

    private static String constant(Object value) {
        return SchemaRules.literal(JsonText.dump(value));
    }

    String visit(Object node, String name) {
        if (node != null && !(node instanceof Map<?, ?>)) {
            error("JSON schema error: schema must be an object, got " + JsonText.dump(node));
            return "";
        }
        Map<?, ?> schema = node instanceof Map<?, ?> m ? m : Map.of();
        boolean isObject = node instanceof Map<?, ?>;
        Object type = schema.get("type");
        Object formatValue = schema.get("format");
        String format = formatValue == null ? "" : formatValue instanceof String s ? s : invalidFormat(formatValue);
        String ruleName = SchemaRules.reserved(name) ? name + "-" : name.isEmpty() ? "root" : name;
        boolean untyped = type == null;

        if (schema.containsKey("$ref")) {
            return addRule(ruleName, resolveRef(String.valueOf(schema.get("$ref"))));
        }
        if (schema.containsKey("oneOf") || schema.containsKey("anyOf")) {
            Object alts = schema.containsKey("oneOf") ? schema.get("oneOf") : schema.get("anyOf");
            return addRule(ruleName, union(name, alts instanceof List<?> l ? l : List.of()));
        }
        if (type instanceof List<?> types) {
            List<Object> copies = new ArrayList<>();
            for (Object t : types) {
                Map<Object, Object> copy = new LinkedHashMap<>(schema);
                copy.put("type", t);
                copies.add(copy);
            }
            return addRule(ruleName, union(name, copies));
        }
        if (schema.containsKey("const")) {
            return addRule(ruleName, constant(schema.get("const")));
        }
        if (schema.containsKey("enum")) {
            List<String> values = new ArrayList<>();
            if (schema.get("enum") instanceof List<?> l) {
                l.forEach(v -> values.add(constant(v)));
            }
            return addRule(ruleName, "(" + String.join(" | ", values) + ")");
        }
        if ((untyped || "object".equals(type)) && (schema.containsKey("properties")
                || (schema.containsKey("additionalProperties") && !Boolean.TRUE.equals(schema.get("additionalProperties"))))) {
            Set<String> required = new HashSet<>();
            if (schema.get("required") instanceof List<?> l) {
                l.stream().filter(String.class::isInstance).forEach(r -> required.add((String) r));
            }
            return addRule(ruleName, new SchemaObjects(this).object(properties(schema.get("properties")), required, name,
                    schema.get("additionalProperties")));
        }
        if ((untyped || "object".equals(type) || "string".equals(type)) && schema.containsKey("allOf")) {
            return addRule(ruleName, new SchemaObjects(this).allOf(schema, name, refs));
        }
        if ((untyped || "array".equals(type)) && (schema.containsKey("items") || schema.containsKey("prefixItems"))) {
            return addRule(ruleName, array(schema, name));
        }
        if ((untyped || "string".equals(type)) && schema.containsKey("pattern")) {
            return SchemaPattern.visit(this, String.valueOf(schema.get("pattern")), ruleName);
        }
        if ((untyped || "string".equals(type)) && UUID_FORMAT.matcher(format).matches()) {
            return addPrimitive(ruleName.equals("root") ? "root" : format, SchemaRules.PRIMITIVES.get("uuid"));
        }
        if ((untyped || "string".equals(type)) && SchemaRules.STRING_FORMATS.containsKey(format + "-string")) {
            String prim = format + "-string";
            return addRule(ruleName, addPrimitive(prim, SchemaRules.STRING_FORMATS.get(prim)));
        }
        if ("string".equals(type) && (schema.containsKey("minLength") || schema.containsKey("maxLength"))) {
            String charRule = addPrimitive("char", SchemaRules.PRIMITIVES.get("char"));
            int min = integer(schema.get("minLength"), 0);
            int max = integer(schema.get("maxLength"), Integer.MAX_VALUE);
            return addRule(ruleName, "\"\\\"\" " + SchemaRules.repetition(charRule, min, max, "") + " \"\\\"\"");
        }
        if ("integer".equals(type) && (schema.containsKey("minimum") || schema.containsKey("exclusiveMinimum")
                || schema.containsKey("maximum") || schema.containsKey("exclusiveMaximum"))) {
            long min = IntegerRanges.NO_MIN;
            long max = IntegerRanges.NO_MAX;
            if (schema.containsKey("minimum")) {
                min = longValue(schema.get("minimum"));
            } else if (schema.containsKey("exclusiveMinimum")) {
                min = longValue(schema.get("exclusiveMinimum")) + 1;
            }
            if (schema.containsKey("maximum")) {
                max = longValue(schema.get("maximum"));
            } else if (schema.containsKey("exclusiveMaximum")) {
                max = longValue(schema.get("exclusiveMaximum")) - 1;
            }
            return addRule(ruleName, "(" + IntegerRanges.of(min, max) + ")");
        }
        if ((node == null || (isObject && schema.isEmpty())) || "object".equals(type)) {
            return addRule(ruleName, addPrimitive("object", SchemaRules.PRIMITIVES.get("object")));
        }
        if (untyped && isObject) {
            return addRule(ruleName, addPrimitive("value", SchemaRules.PRIMITIVES.get("value")));
        }
        if (!(type instanceof String t) || !SchemaRules.PRIMITIVES.containsKey(t)) {
            error("JSON schema error: unrecognized type " + (type instanceof String t ? t : JsonText.dump(type)));
            return "";
        }
        return addPrimitive(ruleName.equals("root") ? "root" : t, SchemaRules.PRIMITIVES.get(t));
    }

    private String array(Map<?, ?> schema, String name) {
        Object items = schema.containsKey("items") ? schema.get("items") : schema.get("prefixItems");
        if (items instanceof List<?> tuple) {
            StringBuilder rule = new StringBuilder("\"[\" space ");
            for (int i = 0; i < tuple.size(); i++) {
                if (i > 0) {
                    rule.append(" \",\" space ");
                }
                rule.append(visit(tuple.get(i), name + (name.isEmpty() ? "" : "-") + "tuple-" + i));
            }
            return rule.append(" space \"]\"").toString();
        }
        String item = visit(items, name + (name.isEmpty() ? "" : "-") + "item");
        int min = integer(schema.get("minItems"), 0);
        Object maxItems = schema.get("maxItems");
        int max = maxItems instanceof Integer || maxItems instanceof Long ? integer(maxItems, 0) : Integer.MAX_VALUE;
        return "\"[\" space " + SchemaRules.repetition(item, min, max, "\",\" space") + " space \"]\"";
    }

    static List<Map.Entry<String, Object>> properties(Object properties) {
        List<Map.Entry<String, Object>> out = new ArrayList<>();
        if (properties instanceof Map<?, ?> m) {
            m.forEach((k, v) -> out.add(new java.util.AbstractMap.SimpleEntry<>(String.valueOf(k), v)));
        }
        return out;
    }

    private static int integer(Object value, int absent) {
        if (value == null) {
            return absent;
        }
        if (value instanceof Number n && n.doubleValue() == Math.rint(n.doubleValue())) {
            return (int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, n.longValue()));
        }
        throw new GrammarException("JSON schema conversion failed:\nJSON schema error: expected a non-negative integer,"
                + " got " + JsonText.dump(value));
    }

    private static long longValue(Object value) {
        if (value instanceof Number n) {
            return n.longValue();
        }
        throw new GrammarException("JSON schema conversion failed:\nexpected a number, got " + JsonText.dump(value));
    }

    private static String invalidFormat(Object format) {
        throw new GrammarException("JSON schema conversion failed:\nJSON schema error: format must be a string");
    }
}
