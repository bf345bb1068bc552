package dev.lazarus.kt.gpu;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Selects the fake CUDA driver of {@link FakeCudaDriverTest} (built once per test JVM) for a test class and clears
 * the selection after it: {@code @ExtendWith(FakeCudaDriver.class)}.
 */
final class FakeCudaDriver implements BeforeAllCallback, AfterAllCallback {

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        FakeCudaDriverTest.buildFakeDriver0();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        System.clearProperty("lazarus.cuda.library");
    }
}
