package dev.lazarus.kt.chat;

import java.util.Iterator;
import java.util.Map;

/**
 * JSON text exactly as Python's {@code json.dumps(x, ensure_ascii=False, indent=indent)} writes
 * it, which is what Hugging Face's {@code tojson} filter produces: {@code ", "} and {@code ": "}
 * separators on one line, {@code ","} plus newline and indentation when {@code indent} is given,
 * non-ASCII characters as they are, keys in insertion order.
 */
public final class PythonJson {

    private PythonJson() {}

    static String dumps(Object value, Integer indent) {
        StringBuilder out = new StringBuilder();
        write(out, value, indent, 0);
        return out.toString();
    }

    private static void write(StringBuilder out, Object value, Integer indent, int depth) {
        switch (value) {
            case null -> out.append("null");
            case String s -> string(out, s);
            case Boolean b -> out.append(b ? "true" : "false");
            case Double d -> out.append(pythonFloat(d));
            case Float f -> out.append(pythonFloat(f.doubleValue()));
            case Number n -> out.append(n);
            case Character c -> string(out, c.toString());
            case Map<?, ?> map -> container(out, map.entrySet().iterator(), map.isEmpty(), '{', '}', indent, depth, true);
            case Iterable<?> list -> container(out, list.iterator(), !list.iterator().hasNext(), '[', ']', indent, depth, false);
            case Object[] array -> write(out, java.util.Arrays.asList(array), indent, depth);
            default -> string(out, value.toString());
        }
    }

    private static void container(StringBuilder out, Iterator<?> items, boolean empty, char open, char close,
            Integer indent, int depth, boolean entries) {
        out.append(open);
        if (empty) {
            out.append(close);
            return;
        }
        boolean first = true;
        while (items.hasNext()) {
            Object item = items.next();
            if (!first) {
                out.append(indent == null ? ", " : ",");
            }
            first = false;
            newline(out, indent, depth + 1);
            if (entries) {
                Map.Entry<?, ?> e = (Map.Entry<?, ?>) item;
                string(out, String.valueOf(e.getKey()));
                out.append(": ");
                write(out, e.getValue(), indent, depth + 1);
            } else {
                write(out, item, indent, depth + 1);
            }
        }
        newline(out, indent, depth);
        out.append(close);
    }

    private static void newline(StringBuilder out, Integer indent, int depth) {
        if (indent != null) {
            out.append('\n').append(" ".repeat(indent * depth));
        }
    }

    private static String pythonFloat(double d) {
        if (Double.isNaN(d)) {
            return "NaN";
        }
        if (Double.isInfinite(d)) {
            return d > 0 ? "Infinity" : "-Infinity";
        }
        if (d == Math.rint(d) && Math.abs(d) < 1e16) {
            return (long) d + ".0";
        }
        return Double.toString(d);
    }

    /**
     * {@code s} as a JSON string the way Python's {@code json.dumps(ensure_ascii=False)} and llama.cpp's JSON library
     * both write it: the short escapes, other control characters as four-digit unicode escapes, the rest as it is.
     */
    public static void quote(String s, StringBuilder out) {
        string(out, s);
    }

    private static void string(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }
}
