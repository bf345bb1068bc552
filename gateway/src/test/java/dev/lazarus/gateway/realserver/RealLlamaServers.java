package dev.lazarus.gateway.realserver;

import dev.lazarus.kt.synthetic.SyntheticModels;
import dev.lazarus.kt.testsupport.LlamaCpp;
import dev.lazarus.kt.testsupport.LlamaServerProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * Real llama-servers (Debian's, in the project's chroot) on a generated tiny llama model, shared by
 * the tests of one class and wired into the gateway's configuration as backends. In CI a missing
 * llama-server fails the tests ({@link LlamaCpp#require()}); elsewhere they are skipped with the reason.
 */
final class RealLlamaServers {

    /** Small enough that a few hundred words overflow it. */
    static final int CONTEXT = 512;

    private static Path model;
    private static final List<LlamaServerProcess> started = new ArrayList<>();

    private RealLlamaServers() {
    }

    static synchronized Path model() {
        if (model == null) {
            try {
                Path dir = Files.createTempDirectory("lazarus-real-llama");
                model = SyntheticModels.write(SyntheticModels.tinyLlama(), dir.resolve("tiny-llama.gguf"));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return model;
    }

    /** Starts one more llama-server on the tiny model; stopped by {@link #stopAll()}. */
    static synchronized LlamaServerProcess start() {
        return start(model());
    }

    /** Starts one more llama-server on {@code model}; stopped by {@link #stopAll()}. */
    static synchronized LlamaServerProcess start(Path model) {
        LlamaCpp.require();
        LlamaServerProcess server = LlamaServerProcess.start(model, "-c", Integer.toString(CONTEXT),
                "--parallel", "2", "--jinja", "--no-webui");
        started.add(server);
        return server;
    }

    /** One more llama-server with {@code slots} parallel slots of {@code perSlot} tokens each. */
    static synchronized LlamaServerProcess startParallel(int slots, int perSlot, String... extra) {
        LlamaCpp.require();
        List<String> args = new ArrayList<>(List.of("-c", Integer.toString(slots * perSlot),
                "--parallel", Integer.toString(slots), "--threads-http", Integer.toString(slots + 4), "--jinja",
                "--no-webui"));
        args.addAll(List.of(extra));
        LlamaServerProcess server = LlamaServerProcess.start(model(), args.toArray(String[]::new));
        started.add(server);
        return server;
    }

    static synchronized void stopAll() {
        started.forEach(LlamaServerProcess::close);
        started.clear();
    }

    /** A port nothing listens on: a backend that refuses every connection. */
    static int closedPort() {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Adds {@code lazarus.backends[index]} of kind llamacpp pointing at {@code url}. */
    static void backend(DynamicPropertyRegistry registry, int index, String id, String url) {
        String prefix = "lazarus.backends[" + index + "].";
        registry.add(prefix + "id", () -> id);
        registry.add(prefix + "kind", () -> "llamacpp");
        registry.add(prefix + "settings.url", () -> url);
        registry.add(prefix + "settings.connect-timeout", () -> "2s");
        registry.add(prefix + "settings.first-token-timeout", () -> "60s");
    }

    /** Adds {@code lazarus.models[index]} routing {@code name} to {@code backends} in order. */
    static void route(DynamicPropertyRegistry registry, int index, String name, String... backends) {
        registry.add("lazarus.models[" + index + "].name", () -> name);
        for (int i = 0; i < backends.length; i++) {
            String id = backends[i];
            registry.add("lazarus.models[" + index + "].backends[" + i + "]", () -> id);
        }
    }
}
