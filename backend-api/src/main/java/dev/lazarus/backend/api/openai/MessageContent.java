package dev.lazarus.backend.api.openai;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * A message's {@code content}: OpenAI accepts either a plain string or an array of content parts
 * ({@code text}, {@code image_url}, {@code input_audio}, ...). Exactly one of {@link #text} and
 * {@link #parts} is set; it serialises back to the shape it came in.
 */
public final class MessageContent {

    private final String text;
    private final List<ContentPart> parts;

    private MessageContent(String text, List<ContentPart> parts) {
        this.text = text;
        this.parts = parts == null ? null : List.copyOf(parts);
    }

    public static MessageContent ofText(String text) {
        return new MessageContent(Objects.requireNonNull(text, "text"), null);
    }

    public static MessageContent ofParts(List<ContentPart> parts) {
        return new MessageContent(null, Objects.requireNonNull(parts, "parts"));
    }

    /** Jackson entry point: a JSON string or an array of part objects. */
    @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
    static MessageContent fromJson(Object raw) {
        if (raw instanceof String s) {
            return ofText(s);
        }
        if (raw instanceof List<?> list) {
            List<ContentPart> parts = new ArrayList<>(list.size());
            for (Object item : list) {
                if (!(item instanceof Map<?, ?> map)) {
                    throw new IllegalArgumentException("content parts must be objects");
                }
                parts.add(ContentPart.fromMap(map));
            }
            return ofParts(parts);
        }
        throw new IllegalArgumentException("content must be a string or an array of content parts");
    }

    @JsonValue
    Object toJson() {
        return text != null ? text : parts;
    }

    public boolean isText() {
        return text != null;
    }

    public List<ContentPart> parts() {
        return parts == null ? List.of(new ContentPart("text", text, null, null)) : parts;
    }

    /** The text of the message: the string itself, or the text parts joined without separator. */
    public String asText() {
        if (text != null) {
            return text;
        }
        return parts.stream()
                .filter(p -> "text".equals(p.type()) && p.text() != null)
                .map(ContentPart::text)
                .collect(Collectors.joining());
    }

    /** True when any part is something other than text (an image, audio, a file). */
    public boolean hasNonTextParts() {
        return parts != null && parts.stream().anyMatch(p -> !"text".equals(p.type()));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof MessageContent other && Objects.equals(text, other.text) && Objects.equals(parts, other.parts);
    }

    @Override
    public int hashCode() {
        return Objects.hash(text, parts);
    }

    @Override
    public String toString() {
        return String.valueOf(toJson());
    }
}
