package dev.lazarus.gateway.api.responses;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.gateway.policy.postgres.PostgresPolicyStore;
import dev.lazarus.gateway.testing.PostgresServer;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * Stored responses in a real PostgreSQL shared by two replicas' stores, beside the policy store's tables: what one
 * keeps the other retrieves, continues and deletes; the age and count bounds hold.
 */
class PostgresResponseStoreTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static PostgresServer server;

    @BeforeAll
    static void startPostgres() {
        server = PostgresServer.start();
    }

    @AfterAll
    static void stopPostgres() {
        if (server != null) {
            server.close();
        }
    }

    private final AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-12-07T10:00:00Z"));
    private final Clock clock = new Clock() {
        public java.time.ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        public Instant instant() {
            return now.get();
        }
    };

    private PostgresResponseStore store(String url, int maxEntries) {
        return new PostgresResponseStore(url, "postgres", PostgresServer.PASSWORD, 2, JSON, maxEntries,
                Duration.ofMinutes(10), clock);
    }

    private static StoredResponse response(String id) {
        ObjectNode response = (ObjectNode) JSON.readTree("{\"id\":\"" + id + "\",\"object\":\"response\",\"output\":"
                + "[{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"Two\"}]}]}");
        ObjectNode input = (ObjectNode) JSON.readTree("{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"user\",\"content\":\"One\"}");
        JsonNode context = JSON.readTree("{\"type\":\"message\",\"role\":\"user\",\"content\":\"Zero\"}");
        return new StoredResponse(response, List.of(context), List.of(input));
    }

    private static StoredResponse withOutputId(StoredResponse stored, String id) {
        ((ObjectNode) stored.response().get("output").get(0)).put("id", id);
        return stored;
    }

    @Test
    void replicasShareStoredResponsesBesideThePolicyStore() {
        String url = server.createDatabase("responses_shared");
        // The policy store's own migrations first: the responses' table has a history of its own beside them.
        new PostgresPolicyStore(url, "postgres", PostgresServer.PASSWORD, Duration.ofMillis(250), 2).close();
        try (PostgresResponseStore a = store(url, 10); PostgresResponseStore b = store(url, 10)) {
            a.put(response("resp_1"));
            StoredResponse seen = b.get("resp_1").orElseThrow();
            assertThat(seen).isEqualTo(response("resp_1"));
            assertThat(seen.conversation()).extracting(n -> n.get("content").isString()
                    ? n.get("content").asString() : n.at("/content/0/text").asString())
                    .containsExactly("Zero", "One", "Two");
            assertThat(b.item("msg_1")).as("an input item, by its id").contains(response("resp_1").input().getFirst());
            a.put(withOutputId(response("resp_2"), "msg_2"));
            assertThat(b.item("msg_2").orElseThrow().at("/content/0/text").asString()).as("an output item").isEqualTo("Two");
            assertThat(b.item("msg_nope")).isEmpty();
            assertThat(b.delete("resp_1")).isTrue();
            assertThat(a.get("resp_1")).isEmpty();
            assertThat(a.delete("resp_1")).isFalse();
        }
    }

    @Test
    void expiredAndOldestResponsesGo() {
        String url = server.createDatabase("responses_bounded");
        try (PostgresResponseStore store = store(url, 2)) {
            store.put(response("resp_1"));
            now.set(now.get().plusSeconds(1));
            store.put(response("resp_2"));
            now.set(now.get().plusSeconds(1));
            store.put(response("resp_3"));
            assertThat(store.get("resp_1")).as("the oldest, past the count").isEmpty();
            assertThat(store.get("resp_2")).isPresent();
            now.set(now.get().plus(Duration.ofMinutes(10)));
            assertThat(store.get("resp_3")).as("past its age").isEmpty();
        }
    }
}
