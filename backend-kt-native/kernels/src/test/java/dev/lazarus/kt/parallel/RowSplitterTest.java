package dev.lazarus.kt.parallel;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;

class RowSplitterTest {

    /** Chunks end on multiples of 16 where every job's rows allow it: no group of the native Q4_K layout is split. */
    @Test
    void chunksKeepGroupsOfSixteenRowsWholeWhereTheJobsAllow() {
        assertThat(new RowSplitter(new int[] {512, 512, 1024}).grain()).isEqualTo(16);
        assertThat(new RowSplitter(new int[] {512, 8}).grain()).isEqualTo(1);
        try (Parallel parallel = Parallel.ofThreads(2)) {
            int[] rows = {512, 512, 1024, 1024};
            AtomicIntegerArray done = new AtomicIntegerArray(4 * 1024);
            RowSplitter.run(parallel, rows, (job, from, to) -> {
                assertThat(from % 16).as("chunk start").isZero();
                assertThat(to % 16).as("chunk end").isZero();
                for (int r = from; r < to; r++) {
                    done.incrementAndGet(1024 * job + r);
                }
            });
            for (int job = 0; job < rows.length; job++) {
                for (int r = 0; r < rows[job]; r++) {
                    assertThat(done.get(1024 * job + r)).isEqualTo(1);
                }
            }
        }
    }
}
