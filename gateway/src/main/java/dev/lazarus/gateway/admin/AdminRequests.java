package dev.lazarus.gateway.admin;

import dev.lazarus.backend.api.Redactor;
import dev.lazarus.gateway.api.ApiError;
import tools.jackson.core.JacksonException;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.JsonNodeFactory;

/** Reads admin request bodies field by field, so that every 400 names the field at fault. */
final class AdminRequests {

    /** Longest operator reason kept: a sentence or two for the journal, not a pasted log. */
    static final int MAX_REASON = 500;

    private final JsonMapper json;
    private final Redactor redactor;

    AdminRequests(JsonMapper json, Redactor redactor) {
        // A key given twice is refused, not resolved to the last: a body's later "prompts" or "reason" must not
        // quietly win over what a reviewer saw first.
        this.json = json.rebuild().enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();
        this.redactor = redactor;
    }

    /**
     * The optional {@code reason} of an operator's action: at most {@value #MAX_REASON} characters
     * (400 otherwise), redacted before the journal keeps it (a pasted key stays out of it).
     */
    String reason(String body) {
        String reason = optionalString(object(body), "reason");
        if (reason != null && reason.length() > MAX_REASON) {
            throw ApiError.invalidValue("'reason' is " + reason.length() + " characters long; at most " + MAX_REASON
                    + " are accepted.", "reason");
        }
        return redactor.redact(reason);
    }

    /** The body as a JSON object; an empty body is an empty object. */
    JsonNode object(String body) {
        if (body == null || body.isBlank()) {
            return JsonNodeFactory.instance.objectNode();
        }
        JsonNode node;
        try {
            node = json.readTree(body);
        } catch (JacksonException e) {
            // The same answer /v1 gives for a body that does not parse.
            throw ApiError.invalidRequest("We could not parse the JSON body of your request: "
                    + e.getOriginalMessage() + ". Send a valid JSON object.", null);
        }
        if (!node.isObject()) {
            throw ApiError.invalidRequest("The request body must be a JSON object.", null);
        }
        return node;
    }

    /** An optional string field; null when absent or null. */
    static String optionalString(JsonNode body, String field) {
        JsonNode value = body.get(field);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isString()) {
            throw ApiError.invalidRequest("'" + field + "' must be a string.", field);
        }
        return value.asString();
    }
}
