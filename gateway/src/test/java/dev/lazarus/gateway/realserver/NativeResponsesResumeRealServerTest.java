package dev.lazarus.gateway.realserver;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The Responses SIGKILL run with the killed llama-server serving Responses natively ({@code responses: native}): its
 * cut stream goes on as chat on the survivor, and the client still sees one response (its item, its sequence).
 */
class NativeResponsesResumeRealServerTest extends ResponsesResumeRealServerTest {

    @DynamicPropertySource
    static void victimServesResponsesNatively(DynamicPropertyRegistry registry) {
        registry.add("lazarus.backends[0].settings.responses", () -> "native");
    }

    @Override
    boolean passedThrough() {
        return true;
    }
}
