package dev.lazarus.gateway.api.responses;

import dev.lazarus.backend.api.openai.Usage;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The {@code response} object of one request, as OpenAI writes it: identity, status, output and usage, and the
 * request's settings echoed (with OpenAI's defaults where the request left them out).
 */
final class ResponseObjects {

    private final JsonMapper json;

    ResponseObjects(JsonMapper json) {
        this.json = json;
    }

    /** A response in progress, no output yet: what {@code response.created} carries. */
    ObjectNode start(ObjectNode request, String id, long createdAt, String model) {
        ObjectNode response = json.createObjectNode();
        response.put("id", id);
        response.put("object", "response");
        response.put("created_at", createdAt);
        response.put("status", "in_progress");
        response.put("background", false);
        response.putNull("error");
        response.putNull("incomplete_details");
        echo(response, request, "instructions", null);
        echo(response, request, "max_output_tokens", null);
        echo(response, request, "max_tool_calls", null);
        response.put("model", model);
        response.putArray("output");
        echo(response, request, "parallel_tool_calls", json.getNodeFactory().booleanNode(true));
        echo(response, request, "previous_response_id", null);
        ObjectNode reasoning = response.putObject("reasoning");
        reasoning.putNull("effort");
        reasoning.putNull("summary");
        if (request.get("reasoning") instanceof ObjectNode asked) {
            reasoning.setAll(asked);
        }
        response.put("service_tier", "default");
        echo(response, request, "store", json.getNodeFactory().booleanNode(true));
        echo(response, request, "temperature", json.getNodeFactory().numberNode(1.0));
        ObjectNode text = response.putObject("text");
        text.putObject("format").put("type", "text");
        text.put("verbosity", "medium");
        if (request.get("text") instanceof ObjectNode asked) {
            text.setAll(asked);
        }
        echo(response, request, "tool_choice", json.getNodeFactory().stringNode("auto"));
        echo(response, request, "tools", json.createArrayNode());
        echo(response, request, "top_logprobs", json.getNodeFactory().numberNode(0));
        echo(response, request, "top_p", json.getNodeFactory().numberNode(1.0));
        echo(response, request, "truncation", json.getNodeFactory().stringNode("disabled"));
        response.putNull("usage");
        echo(response, request, "user", null);
        echo(response, request, "metadata", json.createObjectNode());
        return response;
    }

    /** The finished response: its status, output and usage written into a copy of {@code start}. */
    ObjectNode finish(ObjectNode start, String status, String incompleteReason, List<ObjectNode> output, Usage usage) {
        ObjectNode response = start.deepCopy();
        response.put("status", status);
        if (incompleteReason != null) {
            response.putObject("incomplete_details").put("reason", incompleteReason);
        }
        response.putArray("output").addAll(output.stream().map(JsonNode.class::cast).toList());
        if (usage != null) {
            response.set("usage", usage(usage));
        }
        return response;
    }

    /** A response that failed after it had begun. */
    ObjectNode fail(ObjectNode start, List<ObjectNode> output, String code, String message) {
        ObjectNode response = finish(start, "failed", null, output, null);
        ObjectNode error = response.putObject("error");
        error.put("code", code);
        error.put("message", message);
        return response;
    }

    ObjectNode usage(Usage usage) {
        ObjectNode node = json.createObjectNode();
        node.put("input_tokens", usage.promptTokens());
        node.putObject("input_tokens_details").put("cached_tokens", detail(usage.promptTokensDetails(), "cached_tokens"));
        node.put("output_tokens", usage.completionTokens());
        node.putObject("output_tokens_details")
                .put("reasoning_tokens", detail(usage.completionTokensDetails(), "reasoning_tokens"));
        node.put("total_tokens", usage.totalTokens());
        return node;
    }

    private static long detail(Map<String, Object> details, String name) {
        return details != null && details.get(name) instanceof Number n ? n.longValue() : 0;
    }

    private static void echo(ObjectNode response, ObjectNode request, String field, JsonNode otherwise) {
        JsonNode asked = request.get(field);
        if (asked != null && !asked.isNull()) {
            response.set(field, asked.deepCopy());
        } else if (otherwise != null) {
            response.set(field, otherwise);
        } else {
            response.putNull(field);
        }
    }
}
