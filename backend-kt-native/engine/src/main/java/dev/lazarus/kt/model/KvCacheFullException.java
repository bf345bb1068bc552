package dev.lazarus.kt.model;

/** A sequence would need more positions than its cache may hold (the context size). */
public class KvCacheFullException extends RuntimeException {

    private final int requested;
    private final int limit;

    public KvCacheFullException(int requested, int limit) {
        super("sequence needs " + requested + " positions but the context holds " + limit);
        this.requested = requested;
        this.limit = limit;
    }

    public int requested() {
        return requested;
    }

    public int limit() {
        return limit;
    }
}
