package dev.lazarus.kt.tensor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;

class ParallelTest {

    @Test
    void everyIndexIsVisitedExactlyOnce() {
        try (Parallel p = Parallel.ofThreads(3)) {
            for (int n : new int[] {1, 2, 7, 100, 1001}) {
                AtomicIntegerArray seen = new AtomicIntegerArray(n);
                p.forRange(n, (s, e) -> {
                    for (int i = s; i < e; i++) {
                        seen.incrementAndGet(i);
                    }
                });
                for (int i = 0; i < n; i++) {
                    assertThat(seen.get(i)).as("index %d of %d", i, n).isEqualTo(1);
                }
            }
        }
    }

    @Test
    void chunksRespectTheGrain() {
        try (Parallel p = Parallel.ofThreads(4)) {
            p.forRange(100, 8, (s, e) -> assertThat(s % 8).isZero());
        }
    }

    @Test
    void nestedRangesDoNotDeadlock() {
        try (Parallel p = Parallel.ofThreads(2)) {
            AtomicIntegerArray seen = new AtomicIntegerArray(64);
            p.forRange(8, (s, e) -> {
                for (int i = s; i < e; i++) {
                    int outer = i;
                    p.forRange(8, (s2, e2) -> {
                        for (int j = s2; j < e2; j++) {
                            seen.incrementAndGet(outer * 8 + j);
                        }
                    });
                }
            });
            for (int i = 0; i < 64; i++) {
                assertThat(seen.get(i)).isEqualTo(1);
            }
        }
    }

    @Test
    void failuresReachTheCaller() {
        try (Parallel p = Parallel.ofThreads(3)) {
            assertThatThrownBy(() -> p.forRange(50, (s, e) -> {
                if (s > 0) {
                    throw new IllegalStateException("boom at " + s);
                }
            })).isInstanceOf(IllegalStateException.class).hasMessageContaining("boom");
        }
    }

    @Test
    void sharedPoolHasOneThreadPerProcessor() {
        assertThat(Parallel.shared().threads()).isEqualTo(Runtime.getRuntime().availableProcessors());
        assertThatThrownBy(() -> Parallel.ofThreads(0)).isInstanceOf(IllegalArgumentException.class);
    }
}
