package dev.lazarus.kt.grammar;

import dev.lazarus.kt.chat.PythonJson;
import java.math.BigDecimal;
import java.util.List;
import java.util.Map;

/**
 * JSON values (as Jackson reads them into maps, lists, strings, numbers, booleans and null) written compactly the
 * way llama.cpp's JSON library writes them ({@code dump()}), since the schema converter puts that text into the
 * grammar: no spaces, non-ASCII kept, control characters escaped, doubles in their shortest form.
 */
final class JsonText {

    private JsonText() {}

    static String dump(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out);
        return out.toString();
    }

    private static void write(Object value, StringBuilder out) {
        switch (value) {
            case null -> out.append("null");
            case String s -> string(s, out);
            case Boolean b -> out.append(b);
            case Map<?, ?> map -> {
                out.append('{');
                boolean first = true;
                for (Map.Entry<?, ?> e : map.entrySet()) {
                    out.append(first ? "" : ",");
                    first = false;
                    string(String.valueOf(e.getKey()), out);
                    out.append(':');
                    write(e.getValue(), out);
                }
                out.append('}');
            }
            case List<?> list -> {
                out.append('[');
                for (int i = 0; i < list.size(); i++) {
                    out.append(i == 0 ? "" : ",");
                    write(list.get(i), out);
                }
                out.append(']');
            }
            case Double d -> out.append(number(d));
            case Float f -> out.append(number(f.doubleValue()));
            case BigDecimal d -> out.append(number(d.doubleValue()));
            case Number n -> out.append(n);
            default -> string(value.toString(), out);
        }
    }

    static void string(String s, StringBuilder out) {
        PythonJson.quote(s, out);
    }

    /** The shortest digits that read back as {@code d}, placed as llama.cpp's JSON library places them. */
    static String number(double d) {
        if (Double.isNaN(d) || Double.isInfinite(d)) {
            return "null";
        }
        if (d == 0) {
            return (1 / d < 0) ? "-0.0" : "0.0";
        }
        BigDecimal exact = new BigDecimal(Double.toString(Math.abs(d))).stripTrailingZeros();
        String digits = exact.unscaledValue().toString();
        int k = digits.length();
        int n = k - exact.scale(); // value = 0.digits × 10^n
        StringBuilder out = new StringBuilder(d < 0 ? "-" : "");
        if (k <= n && n <= 15) {
            out.append(digits).append("0".repeat(n - k)).append(".0");
        } else if (0 < n && n <= 15) {
            out.append(digits, 0, n).append('.').append(digits, n, k);
        } else if (-4 < n && n <= 0) {
            out.append("0.").append("0".repeat(-n)).append(digits);
        } else {
            out.append(digits.charAt(0));
            if (k > 1) {
                out.append('.').append(digits, 1, k);
            }
            int e = n - 1;
            out.append('e').append(e < 0 ? '-' : '+');
            out.append(Math.abs(e) < 10 ? "0" : "").append(Math.abs(e));
        }
        return out.toString();
    }
}
