package dev.lazarus.llamacpp.http;

import io.netty.channel.Channel;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.util.AttributeKey;
import java.time.Duration;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.netty.Connection;
import reactor.netty.http.client.HttpClientResponse;

/**
 * Whether a connection that carried a streamed answer goes back to the pool ({@code reuse-stream-connections}):
 * {@code true}; {@code false}, every streamed request saying {@code Connection: close}; or {@code auto}, kept
 * until the server is seen ending such a connection itself, and closed from then on. llama-server (cpp-httplib)
 * ends the connection right after every streamed answer although its headers promise keep-alive; a proxy in
 * front of it with a keep-alive pool, or another server, keeps it, and a TCP connect and close per streamed
 * request cost about as much CPU as the rest of relaying a short stream (docs/benchmarks.md). Seen: the server
 * closed the connection within {@link #window} of a complete streamed answer, no request sent on it since, or a
 * streamed request went out on a reused connection the server had already closed.
 */
public final class StreamReuse {

    public enum Mode { AUTO, TRUE, FALSE }

    private static final Logger log = LoggerFactory.getLogger(StreamReuse.class);

    /** When (System.nanoTime) a streamed answer ended on this connection, none sent on it since. */
    private static final AttributeKey<Long> ANSWER_ENDED = AttributeKey.valueOf("lazarus.llamacpp.streamEnded");
    /** Set once this connection's close is watched. */
    private static final AttributeKey<Boolean> WATCHED = AttributeKey.valueOf("lazarus.llamacpp.closeWatched");

    private final Mode mode;
    private final String serverName;
    private final long windowNanos;
    private volatile boolean serverCloses;
    private volatile boolean stopped;

    /**
     * @param poolMaxIdleTime the pool closes idle connections after this: a close seen within half of it (at most
     *                        a second) after an answer is the server's, not the pool's
     */
    StreamReuse(Mode mode, String serverName, Duration poolMaxIdleTime) {
        this.mode = mode;
        this.serverName = serverName;
        this.windowNanos = Math.min(Duration.ofSeconds(1).toNanos(), poolMaxIdleTime.toNanos() / 2);
    }

    /** The mode a setting's value names, or null when it names none. */
    public static Mode parse(String value) {
        try {
            return Mode.valueOf(value.strip().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** Whether the next streamed request keeps its connection. */
    boolean reuse() {
        return switch (mode) {
            case TRUE -> true;
            case FALSE -> false;
            case AUTO -> !serverCloses;
        };
    }

    /** Called as any request goes out on a pooled connection: what comes after it is not the answer's end. */
    void sending(Connection connection) {
        if (mode == Mode.AUTO) {
            connection.channel().attr(ANSWER_ENDED).set(null);
        }
    }

    /** Called once a kept streamed answer was read to its end: a close by the server from here on is telling. */
    void answerEnded(HttpClientResponse response, Connection connection) {
        if (mode != Mode.AUTO || serverCloses || response.status().code() != 200
                || HttpHeaderValues.CLOSE.contentEqualsIgnoreCase(response.responseHeaders().get(HttpHeaderNames.CONNECTION))) {
            return; // an announced close is the client's own doing, not a sign
        }
        Channel channel = connection.channel();
        channel.attr(ANSWER_ENDED).set(System.nanoTime());
        if (channel.attr(WATCHED).setIfAbsent(Boolean.TRUE) == null) {
            channel.closeFuture().addListener(closed -> {
                Long ended = channel.attr(ANSWER_ENDED).get();
                if (ended != null && System.nanoTime() - ended < windowNanos) {
                    learn("ended a connection right after a streamed answer");
                }
            });
        }
    }

    /** Called when a streamed request went out on a reused connection the server had already closed. */
    void foundClosed() {
        if (mode == Mode.AUTO) {
            learn("had closed a kept connection before a streamed request");
        }
    }

    /** Called before the client closes its own connections: those closes tell nothing. */
    void stop() {
        stopped = true;
    }

    private void learn(String what) {
        if (!serverCloses && !stopped) {
            serverCloses = true;
            log.info("{} {}: streamed requests ask for Connection: close from now on (reuse-stream-connections: auto)",
                    serverName, what);
        }
    }
}
