package dev.lazarus.kt.grammar;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code $ref} resolution as llama.cpp's converter does it before converting: {@code $defs} found anywhere are
 * moved to the root, and each local reference ({@code #/...}) is followed through the schema and remembered under
 * its text. Remote references cannot be fetched, so they are errors.
 */
final class SchemaRefs {

    private SchemaRefs() {}

    @SuppressWarnings("unchecked")
    static Object deepCopy(Object value) {
        if (value instanceof Map<?, ?> m) {
            Map<Object, Object> copy = new LinkedHashMap<>();
            m.forEach((k, v) -> copy.put(k, deepCopy(v)));
            return copy;
        }
        if (value instanceof List<?> l) {
            List<Object> copy = new ArrayList<>();
            l.forEach(v -> copy.add(deepCopy(v)));
            return copy;
        }
        return value;
    }

    static void resolve(Object schema, Map<String, Object> refs, List<String> errors) {
        hoistDefs(schema);
        visit(schema, schema, refs, errors);
    }

    @SuppressWarnings("unchecked")
    private static void hoistDefs(Object schema) {
        if (!(schema instanceof Map<?, ?>)) {
            return;
        }
        Map<Object, Object> collected = new LinkedHashMap<>();
        collect(schema, collected);
        if (!collected.isEmpty()) {
            Map<Object, Object> root = (Map<Object, Object>) schema;
            Map<Object, Object> defs = root.get("$defs") instanceof Map<?, ?> d ? (Map<Object, Object>) d
                    : new LinkedHashMap<>();
            collected.forEach(defs::putIfAbsent);
            root.put("$defs", defs);
        }
    }

    @SuppressWarnings("unchecked")
    private static void collect(Object node, Map<Object, Object> collected) {
        if (!(node instanceof Map<?, ?>)) {
            return;
        }
        Map<Object, Object> map = (Map<Object, Object>) node;
        if (map.get("$defs") instanceof Map<?, ?> defs) {
            defs.forEach(collected::putIfAbsent);
            map.remove("$defs");
        }
        for (Object value : map.values()) {
            if (value instanceof Map<?, ?>) {
                collect(value, collected);
            } else if (value instanceof List<?> list) {
                list.forEach(item -> collect(item, collected));
            }
        }
    }

    private static void visit(Object node, Object root, Map<String, Object> refs, List<String> errors) {
        if (node instanceof List<?> list) {
            list.forEach(item -> visit(item, root, refs, errors));
        } else if (node instanceof Map<?, ?> map) {
            if (map.containsKey("$ref")) {
                String ref = String.valueOf(map.get("$ref"));
                if (!refs.containsKey(ref)) {
                    follow(ref, root, refs, errors);
                }
            } else {
                map.values().forEach(v -> visit(v, root, refs, errors));
            }
        }
    }

    private static void follow(String ref, Object root, Map<String, Object> refs, List<String> errors) {
        if (!ref.startsWith("#/")) {
            errors.add("JSON schema error: unsupported $ref " + ref + ", only references into the same document are"
                    + " supported");
            return;
        }
        Object target = root;
        String[] parts = ref.substring(ref.indexOf('#') + 1).split("/", -1);
        for (int i = 1; i < parts.length; i++) {
            String sel = parts[i];
            if (target instanceof Map<?, ?> m && m.containsKey(sel)) {
                target = m.get(sel);
            } else if (target instanceof List<?> l && isIndex(sel, l.size())) {
                target = l.get(Integer.parseInt(sel));
            } else {
                errors.add("JSON schema error: cannot resolve $ref " + ref + ", " + sel + " not found");
                return;
            }
        }
        refs.put(ref, target);
    }

    private static boolean isIndex(String sel, int size) {
        if (sel.isEmpty() || sel.length() > 9 || !sel.chars().allMatch(Character::isDigit)) {
            return false;
        }
        return Integer.parseInt(sel) < size;
    }
}
