package dev.lazarus.gateway.api.responses;

import java.util.Optional;
import tools.jackson.databind.node.ObjectNode;

/** Where served responses are kept (bounded in count and age); a missing or expired one is empty. */
public interface ResponseStore {

    void put(StoredResponse response);

    Optional<StoredResponse> get(String id);

    /** @return whether it was there */
    boolean delete(String id);

    /**
     * An input or output item of a kept response, by the item's id (what an {@code item_reference} names); of two
     * responses that hold it, the later one's.
     */
    Optional<ObjectNode> item(String itemId);
}
