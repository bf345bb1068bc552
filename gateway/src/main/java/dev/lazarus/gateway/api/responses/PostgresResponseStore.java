package dev.lazarus.gateway.api.responses;

import com.zaxxer.hikari.HikariDataSource;
import dev.lazarus.gateway.config.PostgresPools;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.flywaydb.core.Flyway;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * Stored responses in the policy store's PostgreSQL database, so that every replica can retrieve and continue a
 * response another served. Bounded as the in-memory store is: expired rows and those past the newest
 * {@code maxEntries} are deleted as responses are stored. Its table is migrated by Flyway at open
 * ({@code classpath:db/lazarus-responses}, with a history table of its own beside the policy store's).
 * Calls block: the caller runs them off the event loop.
 */
final class PostgresResponseStore implements ResponseStore, AutoCloseable {

    private final HikariDataSource pool;
    private final JsonMapper json;
    private final int maxEntries;
    private final Duration ttl;
    private final Clock clock;

    PostgresResponseStore(String url, String username, String password, int poolSize, JsonMapper json,
            int maxEntries, Duration ttl, Clock clock) {
        this.pool = PostgresPools.open(url, username, password, poolSize, "lazarus-responses");
        try {
            Flyway.configure().dataSource(pool).locations("classpath:db/lazarus-responses")
                    .table("lazarus_responses_schema_history").baselineOnMigrate(true).baselineVersion("0")
                    .load().migrate();
        } catch (RuntimeException e) {
            pool.close();
            throw e;
        }
        this.json = json;
        this.maxEntries = maxEntries;
        this.ttl = ttl;
        this.clock = clock;
    }

    @Override
    public void put(StoredResponse response) {
        if (maxEntries == 0) {
            return;
        }
        ObjectNode doc = json.createObjectNode();
        doc.set("response", response.response());
        doc.putArray("context").addAll(response.context());
        doc.putArray("input").addAll(response.input().stream().map(JsonNode.class::cast).toList());
        Instant now = clock.instant();
        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement upsert = c.prepareStatement("INSERT INTO stored_response (id, stored_at, expires_at, doc)"
                    + " VALUES (?, ?, ?, ?::jsonb) ON CONFLICT (id) DO UPDATE SET stored_at = EXCLUDED.stored_at,"
                    + " expires_at = EXCLUDED.expires_at, doc = EXCLUDED.doc");
                    PreparedStatement expired = c.prepareStatement("DELETE FROM stored_response WHERE expires_at <= ?");
                    PreparedStatement overflow = c.prepareStatement("DELETE FROM stored_response WHERE id IN"
                            + " (SELECT id FROM stored_response ORDER BY stored_at DESC, id OFFSET ?)")) {
                upsert.setString(1, response.id());
                upsert.setTimestamp(2, Timestamp.from(now));
                upsert.setTimestamp(3, Timestamp.from(now.plus(ttl)));
                upsert.setString(4, json.writeValueAsString(doc));
                upsert.executeUpdate();
                expired.setTimestamp(1, Timestamp.from(now));
                expired.executeUpdate();
                overflow.setInt(1, maxEntries);
                overflow.executeUpdate();
                c.commit();
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            }
        } catch (SQLException e) {
            throw new IllegalStateException("the response store could not keep response " + response.id(), e);
        }
    }

    @Override
    public Optional<StoredResponse> get(String id) {
        try (Connection c = pool.getConnection();
                PreparedStatement select = c.prepareStatement(
                        "SELECT doc::text FROM stored_response WHERE id = ? AND expires_at > ?")) {
            select.setString(1, id);
            select.setTimestamp(2, Timestamp.from(clock.instant()));
            try (ResultSet row = select.executeQuery()) {
                return row.next() ? Optional.of(stored(row.getString(1))) : Optional.empty();
            }
        } catch (SQLException e) {
            throw new IllegalStateException("the response store could not read response " + id, e);
        }
    }

    @Override
    public Optional<ObjectNode> item(String itemId) {
        // the documents whose input or output holds an item with that id (jsonb containment)
        String withId = json.createArrayNode().add(json.createObjectNode().put("id", itemId)).toString();
        try (Connection c = pool.getConnection();
                PreparedStatement select = c.prepareStatement("SELECT doc::text FROM stored_response WHERE expires_at > ?"
                        + " AND (doc->'input' @> ?::jsonb OR doc->'response'->'output' @> ?::jsonb)"
                        + " ORDER BY stored_at DESC, id DESC LIMIT 1")) {
            select.setTimestamp(1, Timestamp.from(clock.instant()));
            select.setString(2, withId);
            select.setString(3, withId);
            try (ResultSet row = select.executeQuery()) {
                return row.next() ? stored(row.getString(1)).item(itemId) : Optional.empty();
            }
        } catch (SQLException e) {
            throw new IllegalStateException("the response store could not look up item " + itemId, e);
        }
    }

    private StoredResponse stored(String text) {
        JsonNode doc = json.readTree(text);
        List<JsonNode> context = new ArrayList<>();
        doc.get("context").forEach(context::add);
        List<ObjectNode> input = new ArrayList<>();
        doc.get("input").forEach(item -> input.add((ObjectNode) item));
        return new StoredResponse((ObjectNode) doc.get("response"), context, input);
    }

    @Override
    public boolean delete(String id) {
        try (Connection c = pool.getConnection();
                PreparedStatement delete = c.prepareStatement(
                        "DELETE FROM stored_response WHERE id = ? AND expires_at > ?")) {
            delete.setString(1, id);
            delete.setTimestamp(2, Timestamp.from(clock.instant()));
            return delete.executeUpdate() > 0;
        } catch (SQLException e) {
            throw new IllegalStateException("the response store could not delete response " + id, e);
        }
    }

    @Override
    public void close() {
        pool.close();
    }
}
