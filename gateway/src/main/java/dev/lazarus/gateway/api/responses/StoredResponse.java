package dev.lazarus.gateway.api.responses;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
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

    /** Its input or output item with that id, if it has one. */
    public Optional<ObjectNode> item(String itemId) {
        for (ObjectNode item : input) {
            if (hasId(item, itemId)) {
                return Optional.of(item);
            }
        }
        for (JsonNode item : response.path("output")) {
            if (item instanceof ObjectNode output && hasId(output, itemId)) {
                return Optional.of(output);
            }
        }
        return Optional.empty();
    }

    static boolean hasId(JsonNode item, String id) {
        return item.get("id") instanceof JsonNode own && own.isString() && own.stringValue().equals(id);
    }

    /** The conversation a request naming this response continues: its context, input and output. */
    public List<JsonNode> conversation() {
        List<JsonNode> items = new ArrayList<>(context);
        items.addAll(input);
        response.get("output").forEach(items::add);
        return items;
    }
}
