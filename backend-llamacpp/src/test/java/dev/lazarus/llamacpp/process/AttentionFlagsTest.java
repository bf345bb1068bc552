package dev.lazarus.llamacpp.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What a llama-server command line says of its attention: llama-server's defaults, its flags, the last one winning. */
class AttentionFlagsTest {

    @Test
    void llamaServersDefaultsAreFlashAttentionOnAndAnF16Cache() {
        assertThat(AttentionFlags.of(List.of("llama-server", "-m", "m.gguf", "--port", "8080")))
                .isEqualTo(Map.of("flash_attention", "on", "cache_type_k", "f16", "cache_type_v", "f16"));
        assertThat(AttentionFlags.of(List.of("llama-server", "-fa", "auto"))).containsEntry("flash_attention", "on");
    }

    @Test
    void itsFlagsLongOrShortAndTheLastOneWins() {
        assertThat(AttentionFlags.of(List.of("llama-server", "-t", "4", "--flash-attn", "on", "-ctk", "Q8_0",
                "--cache-type-v", "q4_0", "-fa", "off")))
                .isEqualTo(Map.of("flash_attention", "off", "cache_type_k", "q8_0", "cache_type_v", "q4_0", "threads", 4));
    }
}
