package dev.lazarus.gateway.policy.postgres;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;
import dev.lazarus.gateway.config.PostgresPools;
import dev.lazarus.gateway.policy.AuditEvent;
import dev.lazarus.gateway.policy.BackendLiveStats;
import dev.lazarus.gateway.policy.BackendPolicyState;
import dev.lazarus.gateway.policy.PolicyStore;
import dev.lazarus.gateway.policy.PolicyStoreUnavailableException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.flywaydb.core.Flyway;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * The {@link PolicyStore} that several gateway replicas share: states, route overrides, the audit
 * journal, leases and live figures in PostgreSQL. Every write is one transaction that first takes
 * one advisory lock ({@link #WRITE_LOCK}), so transitions of all replicas are serialised, the
 * journal's sequence numbers have no gaps and follow the commit order, and each commit sends a
 * {@code NOTIFY} that the {@link ChangeFeed} of every replica turns into a refresh. The schema is
 * migrated by Flyway at open ({@code classpath:db/lazarus-policy}).
 */
public final class PostgresPolicyStore implements PolicyStore {

    /** The advisory lock key every write takes (the bytes of "lazarus!"). */
    static final long WRITE_LOCK = 0x6c617a6172757321L;
    /** The channel the commits notify. */
    static final String CHANNEL = "lazarus_policy";

    private static final TypeReference<List<String>> STRING_LIST = new TypeReference<>() {};

    private final HikariDataSource pool;
    private final ChangeFeed feed;
    private final JsonMapper json = JsonMapper.builder().build();

    /**
     * @param url          a {@code jdbc:postgresql://} URL
     * @param pollInterval the longest a replica goes without looking for changes (NOTIFY usually wakes it first)
     * @param poolSize     connections for reads and writes (the feed has one more of its own)
     */
    public PostgresPolicyStore(String url, String username, String password, Duration pollInterval, int poolSize) {
        this.pool = PostgresPools.open(url, username, password, poolSize, "lazarus-policy");
        try {
            Flyway.configure().dataSource(pool).locations("classpath:db/lazarus-policy").load().migrate();
        } catch (RuntimeException e) {
            pool.close();
            throw e;
        }
        this.feed = new ChangeFeed(url, username, password, pollInterval, this::dropPooledConnections);
    }

    @Override
    public Map<String, BackendPolicyState> states() {
        return read(c -> {
            Map<String, BackendPolicyState> result = new LinkedHashMap<>();
            try (PreparedStatement s = c.prepareStatement("SELECT backend_id, state FROM policy_state ORDER BY backend_id");
                 ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    result.put(rs.getString(1), json.readValue(rs.getString(2), BackendPolicyState.class));
                }
            }
            return result;
        });
    }

    @Override
    public Map<String, List<String>> routeOverrides() {
        return read(c -> {
            Map<String, List<String>> result = new LinkedHashMap<>();
            try (PreparedStatement s = c.prepareStatement("SELECT model, backends FROM route_override ORDER BY model");
                 ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    result.put(rs.getString(1), json.readValue(rs.getString(2), STRING_LIST));
                }
            }
            return result;
        });
    }

    @Override
    public Transition transition(String backendId, Function<BackendPolicyState, Transition> decide) {
        return write(c -> {
            BackendPolicyState stored = null;
            try (PreparedStatement s = c.prepareStatement("SELECT state FROM policy_state WHERE backend_id = ?")) {
                s.setString(1, backendId);
                try (ResultSet rs = s.executeQuery()) {
                    if (rs.next()) {
                        stored = json.readValue(rs.getString(1), BackendPolicyState.class);
                    }
                }
            }
            Transition next = decide.apply(stored);
            if (next == null) {
                return null;
            }
            putState(c, next.state());
            return new Transition(next.state(), append(c, next.event()));
        });
    }

    @Override
    public AuditEvent record(BackendPolicyState state, AuditEvent event) {
        return write(c -> {
            putState(c, state);
            return append(c, event);
        });
    }

    @Override
    public AuditEvent recordRoute(String model, List<String> backends, AuditEvent event) {
        return write(c -> {
            if (backends == null) {
                try (PreparedStatement s = c.prepareStatement("DELETE FROM route_override WHERE model = ?")) {
                    s.setString(1, model);
                    s.executeUpdate();
                }
            } else {
                try (PreparedStatement s = c.prepareStatement("INSERT INTO route_override (model, backends) VALUES (?, ?::jsonb)"
                        + " ON CONFLICT (model) DO UPDATE SET backends = EXCLUDED.backends")) {
                    s.setString(1, model);
                    s.setString(2, json.writeValueAsString(backends));
                    s.executeUpdate();
                }
            }
            return append(c, event);
        });
    }

    private void putState(Connection c, BackendPolicyState state) throws SQLException {
        if (state == null) {
            return;
        }
        try (PreparedStatement s = c.prepareStatement("INSERT INTO policy_state (backend_id, state) VALUES (?, ?::jsonb)"
                + " ON CONFLICT (backend_id) DO UPDATE SET state = EXCLUDED.state")) {
            s.setString(1, state.backendId());
            s.setString(2, json.writeValueAsString(state));
            s.executeUpdate();
        }
    }

    /** Under the write lock: the next number is max + 1, and nobody else can take it meanwhile. */
    private AuditEvent append(Connection c, AuditEvent event) throws SQLException {
        long seq;
        try (PreparedStatement s = c.prepareStatement("SELECT coalesce(max(seq), 0) + 1 FROM audit_event");
             ResultSet rs = s.executeQuery()) {
            rs.next();
            seq = rs.getLong(1);
        }
        AuditEvent numbered = event.withSeq(seq);
        try (PreparedStatement s = c.prepareStatement(
                "INSERT INTO audit_event (seq, at, backend_id, action, event) VALUES (?, ?, ?, ?, ?::jsonb)")) {
            s.setLong(1, seq);
            s.setTimestamp(2, Timestamp.from(numbered.at()));
            s.setString(3, numbered.backendId());
            s.setString(4, numbered.action());
            s.setString(5, json.writeValueAsString(numbered));
            s.executeUpdate();
        }
        return numbered;
    }

    @Override
    public long eventCount() {
        return read(c -> {
            try (PreparedStatement s = c.prepareStatement("SELECT count(*) FROM audit_event");
                 ResultSet rs = s.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        });
    }

    @Override
    public List<AuditEvent> newestEvents(long skip, int limit) {
        return events("SELECT event FROM audit_event ORDER BY seq DESC OFFSET ? LIMIT ?", skip, limit);
    }

    @Override
    public List<AuditEvent> allEvents() {
        return events("SELECT event FROM audit_event ORDER BY seq OFFSET ? LIMIT ?", 0, Long.MAX_VALUE);
    }

    private List<AuditEvent> events(String sql, long skip, long limit) {
        return read(c -> {
            List<AuditEvent> result = new ArrayList<>();
            try (PreparedStatement s = c.prepareStatement(sql)) {
                s.setLong(1, skip);
                s.setLong(2, limit);
                try (ResultSet rs = s.executeQuery()) {
                    while (rs.next()) {
                        result.add(json.readValue(rs.getString(1), AuditEvent.class));
                    }
                }
            }
            return result;
        });
    }

    @Override
    public boolean shared() {
        return true;
    }

    @Override
    public void onExternalChange(Runnable listener) {
        feed.listen(listener);
    }

    @Override
    public boolean tryLease(String name, String holder, Duration ttl) {
        return write(c -> {
            // Taken when free, expired, or already this holder's (a renewal).
            try (PreparedStatement s = c.prepareStatement("INSERT INTO lease (name, holder, expires_at)"
                    + " VALUES (?, ?, now() + ?::interval) ON CONFLICT (name) DO UPDATE"
                    + " SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at"
                    + " WHERE lease.expires_at < now() OR lease.holder = EXCLUDED.holder")) {
                s.setString(1, name);
                s.setString(2, holder);
                s.setString(3, ttl.toMillis() + " milliseconds");
                return s.executeUpdate() == 1;
            }
        });
    }

    @Override
    public void releaseLease(String name, String holder) {
        write(c -> {
            try (PreparedStatement s = c.prepareStatement("DELETE FROM lease WHERE name = ? AND holder = ?")) {
                s.setString(1, name);
                s.setString(2, holder);
                s.executeUpdate();
            }
            return null;
        });
    }

    @Override
    public void publishFigures(String replica, Map<String, BackendLiveStats.Snapshot> figures) {
        if (figures.isEmpty()) {
            return;
        }
        withConnection(c -> {
            try (PreparedStatement s = c.prepareStatement("INSERT INTO live_figures (replica, backend_id,"
                    + " tokens_per_second, ttft_p50_ms, ttft_p95_ms, error_rate, calls, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
                    + " ON CONFLICT (replica, backend_id) DO UPDATE SET tokens_per_second = EXCLUDED.tokens_per_second,"
                    + " ttft_p50_ms = EXCLUDED.ttft_p50_ms, ttft_p95_ms = EXCLUDED.ttft_p95_ms,"
                    + " error_rate = EXCLUDED.error_rate, calls = EXCLUDED.calls, at = EXCLUDED.at")) {
                for (Map.Entry<String, BackendLiveStats.Snapshot> entry : figures.entrySet()) {
                    BackendLiveStats.Snapshot f = entry.getValue();
                    s.setString(1, replica);
                    s.setString(2, entry.getKey());
                    if (Double.isNaN(f.tokensPerSecond())) {
                        s.setNull(3, Types.DOUBLE);
                    } else {
                        s.setDouble(3, f.tokensPerSecond());
                    }
                    setMillis(s, 4, f.ttftP50());
                    setMillis(s, 5, f.ttftP95());
                    s.setDouble(6, f.errorRate());
                    s.setLong(7, f.calls());
                    s.setTimestamp(8, Timestamp.from(f.at()));
                    s.addBatch();
                }
                s.executeBatch();
            }
            return null;
        });
    }

    private static void setMillis(PreparedStatement s, int index, Duration value) throws SQLException {
        if (value == null) {
            s.setNull(index, Types.BIGINT);
        } else {
            s.setLong(index, value.toMillis());
        }
    }

    @Override
    public Map<String, List<BackendLiveStats.Snapshot>> sharedFigures(Duration maxAge) {
        return read(c -> {
            Map<String, List<BackendLiveStats.Snapshot>> result = new LinkedHashMap<>();
            try (PreparedStatement s = c.prepareStatement("SELECT backend_id, tokens_per_second, ttft_p50_ms, ttft_p95_ms,"
                    + " error_rate, calls, at FROM live_figures WHERE at > ? ORDER BY backend_id, replica")) {
                s.setTimestamp(1, Timestamp.from(Instant.now().minus(maxAge)));
                try (ResultSet rs = s.executeQuery()) {
                    while (rs.next()) {
                        double tps = rs.getDouble(2);
                        tps = rs.wasNull() ? Double.NaN : tps;
                        long p50 = rs.getLong(3);
                        Duration ttftP50 = rs.wasNull() ? null : Duration.ofMillis(p50);
                        long p95 = rs.getLong(4);
                        Duration ttftP95 = rs.wasNull() ? null : Duration.ofMillis(p95);
                        result.computeIfAbsent(rs.getString(1), k -> new ArrayList<>()).add(new BackendLiveStats.Snapshot(
                                tps, ttftP50, ttftP95, rs.getDouble(5), rs.getLong(6), rs.getTimestamp(7).toInstant()));
                    }
                }
            }
            return result;
        });
    }

    @Override
    public Status status() {
        return feed.status();
    }

    @Override
    public void close() {
        feed.close();
        pool.close();
    }

    @FunctionalInterface
    private interface Work<T> {
        T run(Connection c) throws SQLException;
    }

    private <T> T read(Work<T> work) {
        return withConnection(work);
    }

    /** One transaction under the write lock, notifying the other replicas when it commits. */
    private <T> T write(Work<T> work) {
        return withConnection(c -> {
            c.setAutoCommit(false);
            try {
                try (PreparedStatement lock = c.prepareStatement("SELECT pg_advisory_xact_lock(?)")) {
                    lock.setLong(1, WRITE_LOCK);
                    lock.execute();
                }
                T result = work.run(c);
                try (PreparedStatement notify = c.prepareStatement("SELECT pg_notify('" + CHANNEL + "', '')")) {
                    notify.execute();
                }
                c.commit();
                return result;
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            } finally {
                c.setAutoCommit(true);
            }
        });
    }

    private <T> T withConnection(Work<T> work) {
        try (Connection c = pool.getConnection()) {
            return work.run(c);
        } catch (SQLException e) {
            if (isConnectionLoss(e)) {
                dropPooledConnections();
            }
            feed.failed(e);
            throw new PolicyStoreUnavailableException(e);
        }
    }

    /**
     * A database that went away (restart, failover) took every session with it, but the pool hands
     * out a connection used in the last half second without checking it: without this the first
     * write after the store returns could fail on a connection from before the outage.
     */
    private void dropPooledConnections() {
        HikariPoolMXBean bean = pool.getHikariPoolMXBean();
        if (bean != null) {
            bean.softEvictConnections();
        }
    }

    /** Connections the pool holds now, from before any outage or not (for tests). */
    int pooledConnections() {
        HikariPoolMXBean bean = pool.getHikariPoolMXBean();
        return bean == null ? 0 : bean.getTotalConnections();
    }

    /** SQLSTATE class 08 (connection exception) or 57P01-57P03 (the server shut down or is starting). */
    private static boolean isConnectionLoss(SQLException e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SQLException s && s.getSQLState() != null
                    && (s.getSQLState().startsWith("08") || s.getSQLState().startsWith("57P0"))) {
                return true;
            }
        }
        return false;
    }
}
