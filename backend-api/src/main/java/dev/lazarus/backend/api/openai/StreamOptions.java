package dev.lazarus.backend.api.openai;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;

/** {@code stream_options}: with {@code include_usage} the stream ends with a usage chunk whose choices are empty. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record StreamOptions(@JsonProperty("include_usage") Boolean includeUsage) {

    public boolean wantsUsage() {
        return Boolean.TRUE.equals(includeUsage);
    }
}
