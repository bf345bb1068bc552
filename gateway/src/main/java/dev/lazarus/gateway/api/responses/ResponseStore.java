package dev.lazarus.gateway.api.responses;

import java.util.Optional;

/** Where served responses are kept (bounded in count and age); a missing or expired one is empty. */
public interface ResponseStore {

    void put(StoredResponse response);

    Optional<StoredResponse> get(String id);

    /** @return whether it was there */
    boolean delete(String id);
}
