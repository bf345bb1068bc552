package dev.lazarus.kt.backend;

import dev.lazarus.kt.chat.ChatTemplate;
import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.placement.DeviceTier;
import dev.lazarus.kt.placement.ExpertPlacement;
import dev.lazarus.kt.runtime.InferenceEngine;
import dev.lazarus.kt.tokenizer.Tokenizer;
import java.util.Map;

/** Everything a ready backend serves with; closed together. {@code placement} is null for dense models, {@code gpu} when CPU-only. */
record LoadedModel(GgufFile file, Parallel parallel, InferenceEngine engine, Tokenizer tokenizer,
                   ChatTemplate template, Map<String, Object> facts, ExpertPlacement placement, DeviceTier gpu)
        implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(LoadedModel.class.getName());

    @Override
    public void close() {
        engine.close();
        if (!engine.stopped()) {
            // a forward pass still runs, and the native kernels read the mapping and the placed experts by address:
            // unmapping them under it would crash the process, so they stay until the process ends
            LOG.log(System.Logger.Level.WARNING, "kt-native engine thread still running 30 s after close; its model stays mapped");
            return;
        }
        if (placement != null) {
            placement.close();
        }
        if (gpu != null) {
            gpu.close();
        }
        parallel.close();
        file.close();
    }
}
