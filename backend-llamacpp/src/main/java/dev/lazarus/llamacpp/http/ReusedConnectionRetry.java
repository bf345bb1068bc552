package dev.lazarus.llamacpp.http;

import io.netty.util.AttributeKey;
import java.io.IOException;
import java.net.ConnectException;
import reactor.netty.Connection;
import reactor.netty.channel.AbortedException;

/**
 * Which failed requests may be sent again, once, on a new connection: those that went out on a
 * pooled connection the upstream had already closed, and got no byte of an answer. llama-server
 * (cpp-httplib) ends the TCP connection right after every streamed answer without a
 * {@code Connection: close}, and drops idle ones after its keep-alive timeout; a connection the pool
 * hands out at that moment fails with a premature close or a reset, while the server never saw the
 * request. The same backend is asked again, so such a failure never reaches the breaker.
 */
final class ReusedConnectionRetry {

    /** Set on a channel once it carried a request: the next request on it is a reuse. */
    private static final AttributeKey<Boolean> USED = AttributeKey.valueOf("lazarus.llamacpp.used");

    private ReusedConnectionRetry() {
    }

    /** One request's view of its connection. Written on the connection's event loop, read after the failure. */
    static final class Attempt {
        private volatile boolean reused;
        private volatile boolean answered;

        /** Called as the request is written: was this connection used before? */
        void sentOn(Connection connection) {
            reused = connection.channel().attr(USED).getAndSet(Boolean.TRUE) != null;
        }

        /** Called when the status line arrived: from here on the upstream has the request. */
        void answered() {
            answered = true;
        }

        /** Whether {@code failure} is a closed reused connection, before any byte of the answer. */
        boolean worthAFreshConnection(Throwable failure) {
            return reused && !answered && closedConnection(failure);
        }
    }

    /**
     * A connection that was closed or reset under the request. Refused connections and timeouts are
     * not: a new connection would meet the same server state.
     */
    static boolean closedConnection(Throwable t) {
        if (t instanceof ConnectException) {
            return false;
        }
        // PrematureCloseException is an IOException; AbortedException is what a write into a closed channel gets.
        return t instanceof IOException || t instanceof AbortedException;
    }
}
