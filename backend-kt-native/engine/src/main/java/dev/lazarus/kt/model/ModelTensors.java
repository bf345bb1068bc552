package dev.lazarus.kt.model;

import dev.lazarus.kt.gguf.GgufTensorInfo;
import java.util.List;

/**
 * Every tensor a forward pass reads, found once by {@link ModelAssembler}: the token embedding, one
 * {@link BlockTensors} per block, the output norm and the output head ({@code token_embd} itself when the file ties
 * them, as llama.cpp does when there is no {@code output} tensor).
 */
public record ModelTensors(GgufTensorInfo embedding, List<BlockTensors> blocks, GgufTensorInfo outputNorm,
                           GgufTensorInfo output) {

    public ModelTensors {
        blocks = List.copyOf(blocks);
    }

    public BlockTensors block(int b) {
        return blocks.get(b);
    }
}
