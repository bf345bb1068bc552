package dev.lazarus.kt.correctness;

import dev.lazarus.kt.tensor.KernelConfig;
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


    @BeforeAll
    static void needsLlamaCpp() {
        LlamaCpp.require();
        parallel = Parallel.ofThreads(2);
    }

    /**
     * The kernels of the parity tests: the JVM's defaults, rounding like the variant llama-server is held to (the
     * host's own, unless pinned).
     */
    static KernelConfig kernels() {
        return KernelConfig.fromSystemProperties().with(GgmlOrders.forVariant(GgmlCpuVariant.reference().id()));
    }

    @AfterAll
    static void closePool() {
        if (parallel != null) {
            parallel.close();
            parallel = null;
        }
    }
}
