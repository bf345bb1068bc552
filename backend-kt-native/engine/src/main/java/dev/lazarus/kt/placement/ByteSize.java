package dev.lazarus.kt.placement;

import java.util.Locale;

/** Byte counts as settings write them: {@code 1073741824}, {@code 512MiB}, {@code 8GiB}, {@code 1.5GB}. */
final class ByteSize {

    private ByteSize() {}

    static long parse(String text) {
        String s = text.trim().toLowerCase(Locale.ROOT).replace(" ", "");
        String[][] units = {{"tib", "1099511627776"}, {"gib", "1073741824"}, {"mib", "1048576"}, {"kib", "1024"},
                {"tb", "1000000000000"}, {"gb", "1000000000"}, {"mb", "1000000"}, {"kb", "1000"}, {"b", "1"}};
        for (String[] u : units) {
            if (s.endsWith(u[0])) {
                return Math.round(Double.parseDouble(s.substring(0, s.length() - u[0].length())) * Long.parseLong(u[1]));
            }
        }
        return Long.parseLong(s);
    }
}
