package dev.lazarus.kt.backend;

import dev.lazarus.kt.chat.ChatTemplate;
import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.runtime.InferenceEngine;
import dev.lazarus.kt.tensor.Parallel;
import dev.lazarus.kt.tokenizer.Tokenizer;
import java.util.Map;

/** Everything a ready backend serves with; closed together. */
record LoadedModel(GgufFile file, Parallel parallel, InferenceEngine engine, Tokenizer tokenizer,
                   ChatTemplate template, Map<String, Object> facts) implements AutoCloseable {

    @Override
    public void close() {
        engine.close();
        parallel.close();
        file.close();
    }
}
