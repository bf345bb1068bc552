package dev.lazarus.kt.grammar;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Object rules of the schema converter: required properties in order, then the optional ones (each may be left
 * out, in order), then additional properties under keys other than the named ones; and {@code allOf} as llama.cpp
 * honours it (object parts merged, enum parts intersected).
 */
final class SchemaObjects {

    private final JsonSchemaGrammar converter;

    SchemaObjects(JsonSchemaGrammar converter) {
        this.converter = converter;
    }

    String object(List<Map.Entry<String, Object>> properties, Set<String> required, String name, Object additional) {
        List<String> requiredProps = new ArrayList<>();
        List<String> optionalProps = new ArrayList<>();
        Map<String, String> kvRules = new HashMap<>();
        List<String> names = new ArrayList<>();
        String prefix = name + (name.isEmpty() ? "" : "-");
        for (Map.Entry<String, Object> p : properties) {
            String propRule = converter.visit(p.getValue(), prefix + p.getKey());
            kvRules.put(p.getKey(), converter.addRule(prefix + p.getKey() + "-kv",
                    SchemaRules.literal(JsonText.dump(p.getKey())) + " space \":\" space " + propRule));
            (required.contains(p.getKey()) ? requiredProps : optionalProps).add(p.getKey());
            names.add(p.getKey());
        }
        if (Boolean.TRUE.equals(additional) || additional instanceof Map<?, ?>) {
            String sub = prefix + "additional";
            String valueRule = additional instanceof Map<?, ?> ? converter.visit(additional, sub + "-value")
                    : primitive("value");
            String keyRule = names.isEmpty() ? primitive("string") : converter.addRule(sub + "-k", notStrings(names));
            kvRules.put("*", converter.addRule(sub + "-kv", keyRule + " \":\" space " + valueRule));
            optionalProps.add("*");
        }
        if (requiredProps.isEmpty() && optionalProps.isEmpty()) {
            return "\"{\" space \"}\"";
        }
        StringBuilder rule = new StringBuilder("\"{\" space ");
        for (int i = 0; i < requiredProps.size(); i++) {
            if (i > 0) {
                rule.append(" \",\" space ");
            }
            rule.append(kvRules.get(requiredProps.get(i)));
        }
        if (!optionalProps.isEmpty()) {
            rule.append(" (");
            if (!requiredProps.isEmpty()) {
                rule.append(" \",\" space ( ");
            }
            for (int i = 0; i < optionalProps.size(); i++) {
                if (i > 0) {
                    rule.append(" | ");
                }
                rule.append(optionalChain(optionalProps.subList(i, optionalProps.size()), false, name, kvRules));
            }
            if (!requiredProps.isEmpty()) {
                rule.append(" )");
            }
            rule.append(" )?");
        }
        return rule.append(" space \"}\"").toString();
    }

    /** The optional properties from the first on, each later one optional in turn. */
    private String optionalChain(List<String> keys, boolean firstOptional, String name, Map<String, String> kvRules) {
        if (keys.isEmpty()) {
            return "";
        }
        String k = keys.getFirst();
        String kv = kvRules.get(k);
        String commaRef = "( \",\" space " + kv + " )";
        String res = firstOptional ? commaRef + ("*".equals(k) ? "*" : "?")
                : kv + ("*".equals(k) ? " " + commaRef + "*" : "");
        if (keys.size() > 1) {
            res += " " + converter.addRule(name + (name.isEmpty() ? "" : "-") + k + "-rest",
                    optionalChain(keys.subList(1, keys.size()), true, name, kvRules));
        }
        return res;
    }

    String allOf(Map<?, ?> schema, String name, Map<String, Object> refs) {
        Set<String> required = new HashSet<>();
        List<Map.Entry<String, Object>> properties = new ArrayList<>();
        Map<String, Integer> enumCounts = new TreeMap<>();
        List<?> parts = schema.get("allOf") instanceof List<?> l ? l : List.of();
        for (Object part : parts) {
            if (part instanceof Map<?, ?> p && p.containsKey("anyOf") && p.get("anyOf") instanceof List<?> any) {
                for (Object alt : any) {
                    component(alt, false, refs, properties, required, enumCounts);
                }
            } else {
                component(part, true, refs, properties, required, enumCounts);
            }
        }
        List<String> intersection = new ArrayList<>();
        enumCounts.forEach((rule, count) -> {
            if (count == parts.size()) {
                intersection.add(rule);
            }
        });
        if (!intersection.isEmpty()) {
            return "(" + String.join(" | ", intersection) + ")";
        }
        return object(properties, required, name, null);
    }

    private void component(Object part, boolean isRequired, Map<String, Object> refs,
            List<Map.Entry<String, Object>> properties, Set<String> required, Map<String, Integer> enumCounts) {
        if (!(part instanceof Map<?, ?> p)) {
            return;
        }
        if (p.containsKey("$ref")) {
            component(refs.get(String.valueOf(p.get("$ref"))), isRequired, refs, properties, required, enumCounts);
        } else if (p.containsKey("properties")) {
            for (Map.Entry<String, Object> e : JsonSchemaGrammar.properties(p.get("properties"))) {
                properties.add(e);
                if (isRequired) {
                    required.add(e.getKey());
                }
            }
        } else if (p.containsKey("enum") && p.get("enum") instanceof List<?> values) {
            for (Object v : values) {
                enumCounts.merge(SchemaRules.literal(JsonText.dump(v)), 1, Integer::sum);
            }
        }
    }

    private String primitive(String name) {
        return converter.visitPrimitive(name);
    }

    /**
     * A JSON string that is none of {@code strings}: a trie of them where each branch either continues a name
     * or leaves it with another character.
     */
    private String notStrings(List<String> strings) {
        Node trie = new Node();
        for (String s : strings) {
            Node node = trie;
            for (byte b : s.getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
                node = node.children.computeIfAbsent((char) (b & 0xFF), c -> new Node());
            }
            node.end = true;
        }
        String charRule = primitive("char");
        StringBuilder out = new StringBuilder("[\"] ( ");
        visit(trie, out, charRule);
        out.append(" )");
        if (!trie.end) {
            out.append('?');
        }
        return out.append(" [\"]").toString();
    }

    private static final class Node {
        final TreeMap<Character, Node> children = new TreeMap<>();
        boolean end;
    }

    private static void visit(Node node, StringBuilder out, String charRule) {
        StringBuilder rejects = new StringBuilder();
        boolean first = true;
        for (Map.Entry<Character, Node> e : node.children.entrySet()) {
            rejects.append(e.getKey());
            if (!first) {
                out.append(" | ");
            }
            first = false;
            out.append('[').append(e.getKey()).append(']');
            if (!e.getValue().children.isEmpty()) {
                out.append(" (");
                visit(e.getValue(), out, charRule);
                out.append(')');
            } else if (e.getValue().end) {
                out.append(' ').append(charRule).append('+');
            }
        }
        if (!node.children.isEmpty()) {
            if (!first) {
                out.append(" | ");
            }
            out.append("[^\"").append(rejects).append("] ").append(charRule).append('*');
        }
    }
}
