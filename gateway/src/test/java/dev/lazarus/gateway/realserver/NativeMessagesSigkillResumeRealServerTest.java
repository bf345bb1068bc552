package dev.lazarus.gateway.realserver;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The Messages SIGKILL run with the killed llama-server serving Messages natively ({@code messages: native}): each
 * stream cut there goes on as chat on the survivor, and every client still sees one continuous Messages stream, with
 * the answer going on after the kill.
 */
class NativeMessagesSigkillResumeRealServerTest extends MessagesSigkillResumeRealServerTest {

    @DynamicPropertySource
    static void victimServesMessagesNatively(DynamicPropertyRegistry registry) {
        registry.add("lazarus.backends[1].settings.messages", () -> "native");
    }

    /**
     * A native stream's text is all there is to go on from (its server tells no token ids), and the random model's
     * text is rich in characters cut in their bytes, which the server's own stream writes as U+FFFD: the
     * continuation goes on from that text, not as the uninterrupted run would.
     */
    @Override
    boolean continuesAsGreedy() {
        return false;
    }
}
