package dev.lazarus.kt.parallel;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class SignalTest {

    @Test
    void anOpenSignalDoesNotWait() {
        Signal s = new Signal();
        s.open();
        s.await();
        assertThat(s.isOpen()).isTrue();
    }

    @Test
    void waitersReturnOnceOpenedWhetherStillPollingOrParked() throws InterruptedException {
        Signal s = new Signal();
        int waiters = 3;
        CountDownLatch started = new CountDownLatch(waiters);
        CountDownLatch returned = new CountDownLatch(waiters);
        for (int i = 0; i < waiters; i++) {
            Thread.ofPlatform().daemon().start(() -> {
                started.countDown();
                s.await();
                returned.countDown();
            });
        }
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(returned.getCount()).as("nobody passes a closed signal").isEqualTo(waiters);
        s.open();
        assertThat(returned.await(10, TimeUnit.SECONDS)).as("every waiter woken").isTrue();
    }

    @Test
    void waitsInsideACallPollAtLeastTheFixedSpinEvenWhenThePoolParks() {
        assertThat(Parallel.inCallSpinNanos()).isGreaterThanOrEqualTo(Parallel.spinNanos())
                .isGreaterThanOrEqualTo(TimeUnit.MICROSECONDS.toNanos(Long.getLong("lazarus.kt.parallel.in-call-spin-micros", 10)));
    }
}
