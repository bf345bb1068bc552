package dev.lazarus.backend.api.openai;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/** The value of a JSON string from its UTF-8 bytes (between the quotes), escapes resolved. */
final class JsonStrings {

    private JsonStrings() {
    }

    static String unescape(byte[] b, int from, int to) {
        StringBuilder out = new StringBuilder(to - from);
        ByteArrayOutputStream plain = new ByteArrayOutputStream();
        int i = from;
        while (i < to) {
            byte c = b[i];
            if (c != '\\') {
                plain.write(c);
                i++;
                continue;
            }
            // The bytes so far are whole UTF-8 characters: an escape never splits one.
            out.append(plain.toString(StandardCharsets.UTF_8));
            plain.reset();
            char e = (char) b[i + 1];
            i += 2;
            switch (e) {
                case 'n' -> out.append('\n');
                case 't' -> out.append('\t');
                case 'r' -> out.append('\r');
                case 'b' -> out.append('\b');
                case 'f' -> out.append('\f');
                case 'u' -> {
                    out.append((char) Integer.parseInt(new String(b, i, 4, StandardCharsets.US_ASCII), 16));
                    i += 4;
                }
                default -> out.append(e); // \" \\ \/
            }
        }
        out.append(plain.toString(StandardCharsets.UTF_8));
        return out.toString();
    }
}
