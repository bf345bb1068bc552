package dev.lazarus.gateway.api;

import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import org.reactivestreams.Subscription;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxOperator;
import reactor.core.publisher.Operators;
import reactor.netty.Connection;

/**
 * Asks a response's source for one element at a time, and only while the client's connection is writable
 * (its write buffer under the high-water mark). Reactor Netty's writer asks for 128 elements ahead
 * whatever their size; an element here is all the events of one upstream read, so a client that stopped
 * reading let the gateway read megabytes of its upstream into memory. With the gate the upstream is read
 * no faster than the client drains: what a stalled stream holds is its write buffer and one element.
 * The connection's guard ({@link ConnectionGuard}) reports when it becomes writable again.
 *
 * <p>The next element is asked for only on the connection's event loop, once the one before was written
 * there: asked from another thread (a source that emits on another loop, as a translated stream
 * subscribed off the loop does), the writability seen would not yet count the write the writer had only
 * queued, and the source could be read ahead of a stalled client without bound.
 */
final class WriteGate<T> extends FluxOperator<T, T> {

    /** Where the guard finds what to call when the connection becomes writable again. */
    static final AttributeKey<Runnable> ON_WRITABLE = AttributeKey.valueOf("lazarus.onWritable");

    private final Channel channel;

    private WriteGate(Flux<T> source, Channel channel) {
        super(source);
        this.channel = channel;
    }

    /** {@code source} gated by the response's connection; as it is where there is none (a mock server). */
    static <T> Flux<T> of(ServerHttpResponse response, Flux<T> source) {
        Object nativeResponse;
        try {
            nativeResponse = ServerHttpResponseDecorator.getNativeResponse(response);
        } catch (IllegalStateException mock) {
            return source;
        }
        if (nativeResponse instanceof Connection connection
                && connection.channel().pipeline().get(ConnectionGuard.MESSAGES) != null) {
            return new WriteGate<>(source, connection.channel());
        }
        return source;
    }

    @Override
    public void subscribe(CoreSubscriber<? super T> actual) {
        source.subscribe(new Gate<>(actual, channel));
    }

    private static final class Gate<T> implements CoreSubscriber<T>, Subscription {
        private static final AtomicLongFieldUpdater<Gate> DEMAND = AtomicLongFieldUpdater.newUpdater(Gate.class, "demand");
        private static final AtomicIntegerFieldUpdater<Gate> WIP = AtomicIntegerFieldUpdater.newUpdater(Gate.class, "wip");

        private final CoreSubscriber<? super T> actual;
        private final Channel channel;
        private Subscription upstream;
        private volatile long demand;
        private volatile int wip;
        /** One element asked of the source and not yet come. */
        private volatile boolean asked;
        private volatile boolean done;
        private final Runnable onWritable = this::drain;
        /** Run on the loop behind the write of the element that came: the next may be asked for. */
        private final Runnable written = this::written;

        Gate(CoreSubscriber<? super T> actual, Channel channel) {
            this.actual = actual;
            this.channel = channel;
        }

        @Override
        public reactor.util.context.Context currentContext() {
            return actual.currentContext();
        }

        @Override
        public void onSubscribe(Subscription s) {
            if (Operators.validate(upstream, s)) {
                upstream = s;
                channel.attr(ON_WRITABLE).set(onWritable);
                actual.onSubscribe(this);
            }
        }

        @Override
        public void onNext(T value) {
            if (demand != Long.MAX_VALUE) {
                DEMAND.decrementAndGet(this);
            }
            actual.onNext(value);
            // Behind the write it handed on: off the connection's event loop the writer queues it there, and
            // only once written does the connection's writability count it.
            if (channel.eventLoop().inEventLoop()) {
                written();
            } else {
                channel.eventLoop().execute(written);
            }
        }

        private void written() {
            asked = false;
            drain();
        }

        @Override
        public void onError(Throwable error) {
            end();
            actual.onError(error);
        }

        @Override
        public void onComplete() {
            end();
            actual.onComplete();
        }

        @Override
        public void request(long n) {
            if (Operators.validate(n)) {
                Operators.addCap(DEMAND, this, n);
                drain();
            }
        }

        @Override
        public void cancel() {
            end();
            upstream.cancel();
        }

        private void end() {
            done = true;
            channel.attr(ON_WRITABLE).compareAndSet(onWritable, null);
        }

        /** Asks for the next element when none is outstanding, one is wanted and the connection takes it. */
        private void drain() {
            if (WIP.getAndIncrement(this) != 0) {
                return;
            }
            int missed = 1;
            do {
                if (!done && !asked && demand > 0 && channel.isWritable()) {
                    asked = true;
                    upstream.request(1);
                }
                missed = WIP.addAndGet(this, -missed);
            } while (missed != 0);
        }
    }
}
