package dev.lazarus.gateway.realserver;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The Responses SIGKILL run with the killed llama-server's Responses translated onto its chat completions
 * ({@code responses: translate}): every event of the one response, the gateway's own, carries its sequence number.
 */
class TranslatedResponsesResumeRealServerTest extends ResponsesResumeRealServerTest {

    @DynamicPropertySource
    static void victimTranslates(DynamicPropertyRegistry registry) {
        registry.add("lazarus.backends[0].settings.responses", () -> "translate");
    }

    @Override
    boolean passedThrough() {
        return false;
    }
}
