package dev.lazarus.gateway.routing;

import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * The part every one-source operator of the request path shares (the backend call, the policy's watch, the
 * first-signal limit, the deadline, the retry): the subscriber that stands between a source and its own
 * subscriber, passing the source's signals down and the demand and the cancel up. A subclass overrides only
 * what its operator does differently. Here, in {@code routing}, which depends on no other gateway package, so that
 * {@code resilience} and {@code policy} can use it without a package cycle.
 */
public abstract class PassThrough<T> implements CoreSubscriber<T>, Subscription {

    protected final CoreSubscriber<? super T> actual;
    /** The source's subscription, set once by {@link #onSubscribe}. */
    protected Subscription upstream;

    protected PassThrough(CoreSubscriber<? super T> actual) {
        this.actual = actual;
    }

    @Override
    public Context currentContext() {
        return actual.currentContext();
    }

    @Override
    public void onSubscribe(Subscription s) {
        if (Operators.validate(upstream, s)) {
            upstream = s;
            actual.onSubscribe(this);
            subscribed();
        }
    }

    /** Called once the subscriber has been handed this subscription (and may already have requested). */
    protected void subscribed() {
    }

    @Override
    public void onNext(T t) {
        actual.onNext(t);
    }

    @Override
    public void onError(Throwable t) {
        actual.onError(t);
    }

    @Override
    public void onComplete() {
        actual.onComplete();
    }

    @Override
    public void request(long n) {
        upstream.request(n);
    }

    @Override
    public void cancel() {
        upstream.cancel();
    }
}
