package dev.lazarus.kt.grammar;

import java.util.List;
import java.util.Map;
import java.util.Set;

/** The fixed rules llama.cpp's schema converter draws on: JSON's primitives and the string formats it knows. */
final class SchemaRules {

    /** Whitespace between JSON tokens: none, one space, or one or two newlines and some indentation. */
    static final String SPACE = "| \" \" | \"\\n\"{1,2} [ \\t]{0,20}";

    record Builtin(String content, List<String> deps) {}

    static final Map<String, Builtin> PRIMITIVES = Map.ofEntries(
            Map.entry("boolean", new Builtin("(\"true\" | \"false\")", List.of())),
            Map.entry("decimal-part", new Builtin("[0-9]{1,16}", List.of())),
            Map.entry("integral-part", new Builtin("[0] | [1-9] [0-9]{0,15}", List.of())),
            Map.entry("number", new Builtin("(\"-\"? integral-part) (\".\" decimal-part)? ([eE] [-+]? integral-part)?",
                    List.of("integral-part", "decimal-part"))),
            Map.entry("integer", new Builtin("(\"-\"? integral-part)", List.of("integral-part"))),
            Map.entry("value", new Builtin("object | array | string | number | boolean | null",
                    List.of("object", "array", "string", "number", "boolean", "null"))),
            Map.entry("object", new Builtin("\"{\" space ( string \":\" space value (\",\" space string \":\" space value)* )?"
                    + " space \"}\"", List.of("string", "value"))),
            Map.entry("array", new Builtin("\"[\" space ( value (\",\" space value)* )? space \"]\"", List.of("value"))),
            Map.entry("uuid", new Builtin("\"\\\"\" [0-9a-fA-F]{8} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{4} \"-\""
                    + " [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{12} \"\\\"\"", List.of())),
            Map.entry("char", new Builtin("[^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})", List.of())),
            Map.entry("string", new Builtin("\"\\\"\" char* \"\\\"\"", List.of("char"))),
            Map.entry("null", new Builtin("\"null\"", List.of())));

    static final Map<String, Builtin> STRING_FORMATS = Map.of(
            "date", new Builtin("[0-9]{4} \"-\" ( \"0\" [1-9] | \"1\" [0-2] ) \"-\" ( \"0\" [1-9] | [1-2] [0-9] | \"3\" [0-1] )",
                    List.of()),
            "time", new Builtin("([01] [0-9] | \"2\" [0-3]) \":\" [0-5] [0-9] \":\" [0-5] [0-9] ( \".\" [0-9]{3} )? ( \"Z\" |"
                    + " ( \"+\" | \"-\" ) ( [01] [0-9] | \"2\" [0-3] ) \":\" [0-5] [0-9] )", List.of()),
            "date-time", new Builtin("date \"T\" time", List.of("date", "time")),
            "date-string", new Builtin("\"\\\"\" date \"\\\"\"", List.of("date")),
            "time-string", new Builtin("\"\\\"\" time \"\\\"\"", List.of("time")),
            "date-time-string", new Builtin("\"\\\"\" date-time \"\\\"\"", List.of("date-time")));

    private SchemaRules() {}

    static boolean reserved(String name) {
        return name.equals("root") || PRIMITIVES.containsKey(name) || STRING_FORMATS.containsKey(name);
    }

    static Builtin builtin(String name) {
        Builtin b = PRIMITIVES.get(name);
        return b != null ? b : STRING_FORMATS.get(name);
    }

    /** A GBNF string literal of {@code text}: quotes, backslashes, CR and LF escaped. */
    static String literal(String text) {
        StringBuilder out = new StringBuilder("\"");
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '\r' -> out.append("\\r");
                case '\n' -> out.append("\\n");
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                default -> out.append(c);
            }
        }
        return out.append('"').toString();
    }

    /** {@code item} repeated {@code min} to {@code max} times ({@link Integer#MAX_VALUE}: unbounded), separated. */
    static String repetition(String item, int min, int max, String separator) {
        boolean hasMax = max != Integer.MAX_VALUE;
        if (max == 0) {
            return "";
        }
        if (min == 0 && max == 1) {
            return item + "?";
        }
        if (separator.isEmpty()) {
            if (min == 1 && !hasMax) {
                return item + "+";
            }
            if (min == 0 && !hasMax) {
                return item + "*";
            }
            return item + "{" + min + "," + (hasMax ? String.valueOf(max) : "") + "}";
        }
        String result = item + " " + repetition("(" + separator + " " + item + ")", min == 0 ? 0 : min - 1,
                hasMax ? max - 1 : max, "");
        return min == 0 ? "(" + result + ")?" : result;
    }

    static final Set<Character> NON_LITERAL = Set.of('|', '.', '(', ')', '[', ']', '{', '}', '*', '+', '?');
    static final Set<Character> ESCAPED_IN_REGEX_ONLY = Set.of('^', '$', '.', '[', ']', '(', ')', '|', '{', '}', '*',
            '+', '?');
}
