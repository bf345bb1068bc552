package dev.lazarus.gateway.api.responses;

import java.util.ArrayList;
import java.util.List;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * A response the gateway served and keeps for {@code previous_response_id} and the retrieval endpoints.
 *
 * @param response the response object as the client got it
 * @param context  the conversation before this request's input (what {@code previous_response_id} named)
 * @param input    this request's input items, with ids
 */
public record StoredResponse(ObjectNode response, List<JsonNode> context, List<ObjectNode> input) {

    public String id() {
        return response.get("id").stringValue();
    }

    /** The conversation a request naming this response continues: its context, input and output. */
    public List<JsonNode> conversation() {
        List<JsonNode> items = new ArrayList<>(context);
        items.addAll(input);
        response.get("output").forEach(items::add);
        return items;
    }
}
