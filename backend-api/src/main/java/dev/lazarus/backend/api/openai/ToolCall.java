package dev.lazarus.backend.api.openai;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * A tool call made by the assistant. In stream deltas {@code index} identifies the call across
 * chunks and every other field may arrive in pieces ({@code arguments} especially).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ToolCall(Integer index, String id, String type, FunctionCall function) {

    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record FunctionCall(String name, String arguments) {}
}
