package dev.lazarus.gateway.policy.postgres;

import dev.lazarus.gateway.policy.PolicyStore;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import org.postgresql.PGConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a replica learns what the others wrote: one connection of its own that {@code LISTEN}s on
 * the store's channel and, on every notification or at the latest every poll interval, reads the
 * journal's newest sequence number; when it moved, the listeners refresh. The journal numbers every
 * write in commit order, so that one number says whether anything changed. When the database goes
 * away the feed says so in {@link #status} and retries; the first look after it returns refreshes,
 * which is how a replica catches up on what it missed.
 */
final class ChangeFeed implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ChangeFeed.class);

    private final String url;
    private final Properties credentials = new Properties();
    private final Duration pollInterval;
    private final Runnable onOutage;
    private final List<Runnable> listeners = new CopyOnWriteArrayList<>();
    private volatile Thread thread;
    private volatile boolean closed;
    private volatile Connection connection;
    private volatile Instant lastSync;
    private volatile String problem;

    /** @param onOutage run when the feed loses the database (the store drops its pooled connections then) */
    ChangeFeed(String url, String username, String password, Duration pollInterval, Runnable onOutage) {
        this.url = url;
        this.onOutage = onOutage;
        if (username != null) {
            credentials.setProperty("user", username);
        }
        if (password != null) {
            credentials.setProperty("password", password);
        }
        credentials.setProperty("connectTimeout", "2");
        credentials.setProperty("socketTimeout", "10");
        this.pollInterval = pollInterval;
    }

    /** Adds a listener; the first one starts the feed (so no change slips between load and listen). */
    synchronized void listen(Runnable listener) {
        listeners.add(listener);
        if (thread == null && !closed) {
            thread = Thread.ofPlatform().name("lazarus-policy-feed").daemon().start(this::run);
        }
    }

    PolicyStore.Status status() {
        String p = problem;
        return new PolicyStore.Status("postgres", p == null, lastSync, p);
    }

    /** A read or write of the store failed: health says so until the feed reaches it again. */
    void failed(SQLException e) {
        problem = describe(e);
    }

    private void run() {
        long seen = -1;
        while (!closed) {
            try (Connection c = DriverManager.getConnection(url, credentials)) {
                connection = c;
                try (PreparedStatement listen = c.prepareStatement("LISTEN " + PostgresPolicyStore.CHANNEL)) {
                    listen.execute();
                }
                PGConnection pg = c.unwrap(PGConnection.class);
                if (problem != null) {
                    log.info("policy store reachable again: catching up");
                }
                while (!closed) {
                    long head = head(c);
                    problem = null;
                    lastSync = Instant.now();
                    if (head != seen && notifyListeners()) {
                        seen = head;
                    }
                    pg.getNotifications((int) Math.max(1, pollInterval.toMillis()));
                }
            } catch (SQLException e) {
                if (closed) {
                    return;
                }
                if (problem == null) {
                    log.warn("policy store unreachable, serving with the last known states: {}", describe(e));
                }
                problem = describe(e);
                onOutage.run();
                // Forces a refresh when it comes back, even if no event was written meanwhile (a write may have
                // been in flight when the connection broke).
                seen = -1;
                sleep();
            } finally {
                connection = null;
            }
        }
    }

    private static long head(Connection c) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("SELECT coalesce(max(seq), 0) FROM audit_event");
             ResultSet rs = s.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** False when a listener failed: the store may have gone between the look and the refresh; the next look retries. */
    private boolean notifyListeners() {
        boolean all = true;
        for (Runnable listener : listeners) {
            try {
                listener.run();
            } catch (RuntimeException e) {
                log.warn("policy refresh failed: {}", e.toString());
                all = false;
            }
        }
        return all;
    }

    private void sleep() {
        try {
            Thread.sleep(Math.max(1, pollInterval.toMillis()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            closed = true;
        }
    }

    private static String describe(SQLException e) {
        return e.getClass().getSimpleName() + ": " + e.getMessage();
    }

    @Override
    public void close() {
        closed = true;
        Connection c = connection;
        if (c != null) {
            try {
                c.close();
            } catch (SQLException e) {
                // closing anyway
            }
        }
        Thread t = thread;
        if (t != null) {
            t.interrupt();
        }
    }
}
