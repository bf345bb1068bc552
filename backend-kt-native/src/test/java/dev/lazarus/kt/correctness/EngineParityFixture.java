package dev.lazarus.kt.correctness;

import dev.lazarus.kt.tensor.Parallel;
import dev.lazarus.kt.testsupport.LlamaCpp;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * What every engine-against-llama-server test class shares: llama.cpp is required (fails under {@code CI=true}
 * when missing), the models are written into one directory per class and the engine runs on one two-thread pool.
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

    @AfterAll
    static void closePool() {
        if (parallel != null) {
            parallel.close();
            parallel = null;
        }
    }
}
