package dev.lazarus.gateway.api;

import java.net.InetAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** Open connections in all and per client address, against the configured caps (0: no cap). */
final class ConnectionCount {

    private final int max;
    private final int maxPerAddress;
    private final AtomicInteger total = new AtomicInteger();
    private final ConcurrentHashMap<InetAddress, AtomicInteger> perAddress = new ConcurrentHashMap<>();

    ConnectionCount(int max, int maxPerAddress) {
        this.max = max;
        this.maxPerAddress = maxPerAddress;
    }

    /** Counts a new connection if both caps allow it; a true answer must be followed by {@link #release}. */
    boolean tryAcquire(InetAddress address) {
        if (total.incrementAndGet() > max && max > 0) {
            total.decrementAndGet();
            return false;
        }
        int[] mine = new int[1];
        perAddress.compute(address, (a, n) -> {
            AtomicInteger count = n == null ? new AtomicInteger() : n;
            mine[0] = count.incrementAndGet();
            return count;
        });
        if (maxPerAddress > 0 && mine[0] > maxPerAddress) {
            release(address);
            return false;
        }
        return true;
    }

    void release(InetAddress address) {
        total.decrementAndGet();
        // Removed at zero inside compute, so an address that comes and goes leaves nothing behind.
        perAddress.computeIfPresent(address, (a, n) -> n.decrementAndGet() <= 0 ? null : n);
    }

    int total() {
        return total.get();
    }

    int addresses() {
        return perAddress.size();
    }
}
