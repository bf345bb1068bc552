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

    @Override
    public void close() {
        engine.close();
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
