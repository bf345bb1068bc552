package dev.lazarus.kt.correctness;

import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.tensor.GgmlOrders;
import dev.lazarus.kt.testsupport.GgmlCpuVariant;
import dev.lazarus.kt.testsupport.LlamaCpp;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * What every engine-against-llama-server test class shares: llama.cpp is required (fails under {@code CI=true}
 * when missing), the models are written into one directory per class, the engine runs on one two-thread pool and
 * rounds like the ggml CPU variant llama-server is held to.
 */
abstract class EngineParityFixture {

    @TempDir
    static Path dir;

    static Parallel parallel;

    /** The engine rounds like the variant llama-server is held to (the host's own, unless pinned). */
    private static GgmlOrders.Scope orders;

    @BeforeAll
    static void needsLlamaCpp() {
        LlamaCpp.require();
        parallel = Parallel.ofThreads(2);
        orders = GgmlOrders.use(GgmlOrders.forVariant(GgmlCpuVariant.reference().id()));
    }

    @AfterAll
    static void closePool() {
        if (orders != null) {
            orders.close();
            orders = null;
        }
        if (parallel != null) {
            parallel.close();
            parallel = null;
        }
    }
}
