package dev.lazarus.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import org.junit.jupiter.api.Test;

class ConnectionCountTest {

    private static final InetAddress A = InetAddress.getLoopbackAddress();
    private static final InetAddress B = InetAddress.ofLiteral("10.0.0.2");

    @Test
    void capsPerAddressAndInAllAndForgetsAddressesThatLeave() {
        ConnectionCount count = new ConnectionCount(3, 2);
        assertThat(count.tryAcquire(A)).isTrue();
        assertThat(count.tryAcquire(A)).isTrue();
        assertThat(count.tryAcquire(A)).as("third from one address").isFalse();
        assertThat(count.tryAcquire(B)).isTrue();
        assertThat(count.tryAcquire(B)).as("fourth in all").isFalse();
        assertThat(count.total()).isEqualTo(3);
        count.release(A);
        count.release(A);
        count.release(B);
        assertThat(count.total()).isZero();
        assertThat(count.addresses()).isZero();
    }

    @Test
    void zeroMeansNoCap() {
        ConnectionCount count = new ConnectionCount(0, 0);
        for (int i = 0; i < 1000; i++) {
            assertThat(count.tryAcquire(A)).isTrue();
        }
    }
}
