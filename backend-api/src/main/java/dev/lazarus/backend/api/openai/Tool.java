package dev.lazarus.backend.api.openai;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.Map;

/** A tool the model may call; only {@code function} tools exist in the chat API today. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Tool(String type, Function function) {

    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Function(String name, String description, Map<String, Object> parameters, Boolean strict) {}
}
