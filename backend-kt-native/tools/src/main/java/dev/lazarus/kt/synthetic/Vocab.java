package dev.lazarus.kt.synthetic;

import dev.lazarus.kt.gguf.GgufWriter;

/** A synthetic model's vocabulary: its size (the embedding and output rows) and its {@code tokenizer.*} metadata. */
public interface Vocab {

    int size();

    void writeTo(GgufWriter w);
}
