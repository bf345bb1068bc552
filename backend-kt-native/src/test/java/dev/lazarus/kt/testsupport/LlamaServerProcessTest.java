package dev.lazarus.kt.testsupport;

import dev.lazarus.kt.synthetic.SyntheticModels;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

@Tag("llama-server")
class LlamaServerProcessTest {

    @TempDir
    Path dir;

    @Test
    void pidIsLlamaServerItselfSoKillIsARealCrash() {
        Path model = SyntheticModels.write(SyntheticModels.tinyLlama(), dir.resolve("kill.gguf"));
        try (LlamaServerProcess server = LlamaServerProcess.start(model, "-c", "256")) {
            long pid = server.pid();
            assertThat(ProcessHandle.of(pid).map(ProcessHandle::info).flatMap(ProcessHandle.Info::command))
                    .hasValueSatisfying(cmd -> assertThat(cmd).endsWith("/llama-server"));
            assertThat(server.get("/health")).contains("ok");

            server.kill();

            assertThat(server.isAlive()).isFalse();
            assertThat(ProcessHandle.of(pid).filter(ProcessHandle::isAlive)).isEqualTo(Optional.empty());
        }
    }

    @Test
    void serverListensOnLoopbackOnly() {
        Path model = SyntheticModels.write(SyntheticModels.tinyLlama(), dir.resolve("loopback.gguf"));
        try (LlamaServerProcess server = LlamaServerProcess.start(model, "-c", "256")) {
            assertThat(server.url().getHost()).isEqualTo("127.0.0.1");
            assertThat(server.logTail()).contains("listening on http://127.0.0.1:" + server.port());
        }
    }
}
