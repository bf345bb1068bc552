package dev.lazarus.backend.api.openai;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.Map;
import java.util.function.Function;

/**
 * A request's body (chat or legacy completion) as the client sent it (a UTF-8 JSON object), so that an HTTP backend sends
 * those bytes on instead of writing the bound request again: the model's value written over where
 * the backend's model name differs, fields the gateway adds ({@code stream}, {@code stream_options},
 * extra fields a backend puts) appended before the closing brace. Only a body whose every top-level
 * field was read (so that a field the request lacks is known to be absent from the bytes) carries one.
 */
public final class RawRequest {

    private final byte[] bytes;
    private final int modelStart;
    private final int modelEnd;
    private final int closingBrace;
    /** The model's JSON string written over the client's, or null to keep it. */
    private final byte[] model;
    /** Fields added by the gateway, each with its leading comma. */
    private final byte[] appended;
    /** The extra fields as read, keys and values in order: a backend may add to them, never change them. */
    private final Object[] extraAtRead;

    private RawRequest(byte[] bytes, int modelStart, int modelEnd, int closingBrace, byte[] model, byte[] appended,
                       Object[] extraAtRead) {
        this.bytes = bytes;
        this.modelStart = modelStart;
        this.modelEnd = modelEnd;
        this.closingBrace = closingBrace;
        this.model = model;
        this.appended = appended;
        this.extraAtRead = extraAtRead;
    }

    /**
     * @param bytes        the body (never changed afterwards)
     * @param modelStart   where the model's value starts (its opening quote)
     * @param modelEnd     just after its closing quote
     * @param closingBrace where the object's closing brace stands
     * @param extra        the request's extra fields as read
     */
    public static RawRequest of(byte[] bytes, int modelStart, int modelEnd, int closingBrace, Map<String, Object> extra) {
        Object[] read = new Object[2 * extra.size()];
        int i = 0;
        for (Map.Entry<String, Object> e : extra.entrySet()) {
            read[i++] = e.getKey();
            read[i++] = e.getValue();
        }
        return new RawRequest(bytes, modelStart, modelEnd, closingBrace, null, new byte[0], read);
    }

    /** The same body with another model name. */
    RawRequest withModel(String newModel) {
        return new RawRequest(bytes, modelStart, modelEnd, closingBrace, quoted(newModel), appended, extraAtRead);
    }

    /** The same body with {@code field} (a JSON text: {@code "stream":true}) appended. */
    RawRequest with(String field) {
        byte[] add = (',' + field).getBytes(StandardCharsets.UTF_8);
        byte[] more = new byte[appended.length + add.length];
        System.arraycopy(appended, 0, more, 0, appended.length);
        System.arraycopy(add, 0, more, appended.length, add.length);
        return new RawRequest(bytes, modelStart, modelEnd, closingBrace, model, more, extraAtRead);
    }

    /**
     * The body for the request asked as a stream that ends with a usage chunk, where the request read had
     * {@code stream} and {@code streamOptions}; null where the body says otherwise (then the request is
     * written again). A field absent from the request is absent from the bytes: appending it keeps one object.
     */
    RawRequest asUsageStream(Boolean stream, StreamOptions streamOptions) {
        if (Boolean.FALSE.equals(stream) || streamOptions != null && !streamOptions.wantsUsage()) {
            return null;
        }
        RawRequest body = this;
        if (stream == null) {
            body = body.with("\"stream\":true");
        }
        if (streamOptions == null) {
            body = body.with("\"stream_options\":{\"include_usage\":true}");
        }
        return body;
    }

    /**
     * The body to send for a request whose extra fields are now {@code extra}: the bytes as read, with
     * the model and the added fields, and the extra fields added since the read written by {@code json};
     * null where an extra field read was changed or removed (then the request must be written whole).
     */
    public byte[] write(Map<String, Object> extra, Function<Object, byte[]> json) {
        if (extra.size() < extraAtRead.length / 2) {
            return null;
        }
        Iterator<Map.Entry<String, Object>> entries = extra.entrySet().iterator();
        for (int i = 0; i < extraAtRead.length; i += 2) {
            Map.Entry<String, Object> e = entries.next();
            if (!e.getKey().equals(extraAtRead[i]) || e.getValue() != extraAtRead[i + 1]) {
                return null;
            }
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(bytes.length + appended.length + 64);
        if (model == null) {
            out.write(bytes, 0, closingBrace);
        } else {
            out.write(bytes, 0, modelStart);
            out.writeBytes(model);
            out.write(bytes, modelEnd, closingBrace - modelEnd);
        }
        out.writeBytes(appended);
        while (entries.hasNext()) {
            Map.Entry<String, Object> e = entries.next();
            out.write(',');
            out.writeBytes(quoted(e.getKey()));
            out.write(':');
            out.writeBytes(json.apply(e.getValue()));
        }
        out.write(bytes, closingBrace, bytes.length - closingBrace);
        return out.toByteArray();
    }

    /** A JSON string literal. */
    static byte[] quoted(String s) {
        StringBuilder sb = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.append('"').toString().getBytes(StandardCharsets.UTF_8);
    }
}
