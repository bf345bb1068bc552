package dev.lazarus.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** Which tokens a guard accepts: its secrets only, however many threads ask at once (one digest per thread). */
class BearerTokensTest {

    private final BearerTokens tokens = new BearerTokens("/v1/**", List.of("sk-alpha", "sk-beta-é"));

    @Test
    void acceptsItsSecretsOnly() {
        assertThat(tokens.accepts("sk-alpha")).isTrue();
        assertThat(tokens.accepts("sk-beta-é")).isTrue();
        assertThat(tokens.accepts("sk-alph")).isFalse();
        assertThat(tokens.accepts("sk-alphaa")).isFalse();
        assertThat(tokens.accepts("")).isFalse();
        assertThat(new BearerTokens("/v1/**", List.of()).accepts("sk-alpha")).isFalse();
    }

    /** A digest shared across threads would mix their inputs: a right token refused, a wrong one let in. */
    @Test
    void manyThreadsAtOnceEachGetTheirOwnAnswer() throws Exception {
        int threads = 8;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Callable<Integer>> work = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int seed = t;
                work.add(() -> {
                    int wrong = 0;
                    for (int i = 0; i < 20_000; i++) {
                        boolean right = (i + seed) % 2 == 0;
                        String token = right ? ((i % 3 == 0) ? "sk-beta-é" : "sk-alpha") : "sk-alpha-" + i;
                        if (tokens.accepts(token) != right) {
                            wrong++;
                        }
                    }
                    return wrong;
                });
            }
            for (Future<Integer> result : pool.invokeAll(work)) {
                assertThat(result.get()).isZero();
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
