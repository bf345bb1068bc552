package dev.lazarus.kt.testsupport;

import dev.lazarus.kt.synthetic.SyntheticModels;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
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
            // The kernel's socket table, not the log (which may lag): a LISTEN socket on 127.0.0.1 at the
            // port, none on the wildcard address.
            String port = String.format("%04X", server.port());
            List<String> listening = listeningAddresses(port);
            assertThat(listening).as("listening sockets on port " + server.port()).containsExactly("0100007F");
        }
    }

    /**
     * The chroot script holds ggml to the variant asked for (only that library is visible), whatever the host would
     * pick: the reference this host's parity suites use, and haswell, which every AVX2 host runs.
     */
    @Test
    void ggmlIsHeldToTheVariantAskedFor() {
        Path model = SyntheticModels.write(SyntheticModels.tinyLlama(), dir.resolve("variant.gguf"));
        for (GgmlCpuVariant variant : List.of(GgmlCpuVariant.reference(), GgmlCpuVariant.HASWELL)) {
            // -lv 4: the log names the library ggml loaded
            try (LlamaServerProcess server = LlamaServerProcess.start(variant, model, "-c", "256", "-lv", "4")) {
                assertThat(server.log()).as("llama-server's log, held to %s on %s", variant.id(), GgmlCpuVariant.hostSummary())
                        .containsPattern("loaded CPU backend from \\S*/libggml-cpu-" + variant.id() + "\\.so")
                        .doesNotContainPattern("loaded CPU backend from \\S*/libggml-cpu-(?!" + variant.id() + "\\.so)");
                assertThat(server.variant()).isEqualTo(variant);
            }
        }
    }

    /** Local IPv4 addresses (hex, as /proc/net/tcp writes them) with a LISTEN socket on {@code hexPort}. */
    private static List<String> listeningAddresses(String hexPort) {
        try {
            return Files.readAllLines(Path.of("/proc/net/tcp")).stream().skip(1)
                    .map(line -> line.trim().split("\\s+"))
                    .filter(f -> f[1].endsWith(":" + hexPort) && "0A".equals(f[3]))
                    .map(f -> f[1].substring(0, f[1].indexOf(':')))
                    .toList();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
