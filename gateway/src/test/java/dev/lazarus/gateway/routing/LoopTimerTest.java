package dev.lazarus.gateway.routing;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.DefaultEventLoopGroup;
import io.netty.channel.EventLoop;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

class LoopTimerTest {

    @Test
    void aDelayAskedOnAnEventLoopFiresOnThatLoop() throws Exception {
        DefaultEventLoopGroup group = new DefaultEventLoopGroup(1);
        try {
            EventLoop loop = group.next();
            CompletableFuture<Boolean> onLoop = new CompletableFuture<>();
            loop.execute(() -> Mono.delay(Duration.ofMillis(20), LoopTimer.INSTANCE)
                    .subscribe(tick -> onLoop.complete(loop.inEventLoop())));
            assertThat(onLoop.get(5, TimeUnit.SECONDS)).isTrue();
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }

    @Test
    void aDelayAskedElsewhereFiresOnTheParallelScheduler() {
        String thread = Mono.delay(Duration.ofMillis(10), LoopTimer.INSTANCE)
                .map(tick -> Thread.currentThread().getName()).block(Duration.ofSeconds(5));
        assertThat(thread).startsWith("parallel-");
    }

    @Test
    void aDisposedDelayNeverFires() throws Exception {
        DefaultEventLoopGroup group = new DefaultEventLoopGroup(1);
        try {
            AtomicBoolean fired = new AtomicBoolean();
            CompletableFuture<Disposable> armed = new CompletableFuture<>();
            group.next().execute(() -> armed.complete(
                    LoopTimer.INSTANCE.schedule(() -> fired.set(true), 50, TimeUnit.MILLISECONDS)));
            Disposable timer = armed.get(5, TimeUnit.SECONDS);
            timer.dispose();
            Thread.sleep(200);
            assertThat(fired).isFalse();
            assertThat(timer.isDisposed()).isTrue();
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }
}
