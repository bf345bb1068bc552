package dev.lazarus.gateway.realserver;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The Messages SIGKILL run with the killed llama-server's Messages translated onto its chat completions
 * ({@code messages: translate}): the chat stream beneath each is resumed on the survivor from its exact token ids, and
 * every client's answer goes on as an uninterrupted greedy run of the chat endpoint gives it.
 */
class TranslatedMessagesSigkillResumeRealServerTest extends MessagesSigkillResumeRealServerTest {

    @DynamicPropertySource
    static void victimTranslates(DynamicPropertyRegistry registry) {
        registry.add("lazarus.backends[1].settings.messages", () -> "translate");
    }
}
