package dev.lazarus.backend.api.openai;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Map;

/** {@code response_format}: {@code text}, {@code json_object} or {@code json_schema} (with its schema object). */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ResponseFormat(String type, @JsonProperty("json_schema") Map<String, Object> jsonSchema) {}
