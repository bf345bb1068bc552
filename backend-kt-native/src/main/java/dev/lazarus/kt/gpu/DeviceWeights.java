package dev.lazarus.kt.gpu;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.gguf.GgufTensorInfo;
import dev.lazarus.kt.model.ModelConfig;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * Every weight the GPU layer path reads besides the routed experts, copied once from the mapped GGUF into
 * device memory in its stored layout: per block the norms, the attention projections and the router; the
 * output norm and head. Knows llama.cpp's tensor names for grouped-query attention blocks with routed
 * experts (qwen3moe, Mixtral-style llama); {@link #unsupported} says why another model cannot take this path.
 */
final class DeviceWeights implements AutoCloseable {

    /** One block's weights on the device; {@code qNorm}, {@code kNorm} are 0 without QK-norm. */
    record Block(long attnNorm, DeviceMatrix q, DeviceMatrix k, DeviceMatrix v, DeviceMatrix output, long qNorm,
                 long kNorm, long ffnNorm, DeviceMatrix router) {}

    private final CudaDriver cu;
    private final MemorySegment stream;
    private final GgufFile file;
    private final List<Long> allocations = new ArrayList<>();
    private final List<Block> blocks = new ArrayList<>();
    private long bytes;
    final long outputNorm;
    final DeviceMatrix output;

    DeviceWeights(CudaDriver cu, MemorySegment stream, GgufFile file, ModelConfig config) {
        this.cu = cu;
        this.stream = stream;
        this.file = file;
        try {
            for (int b = 0; b < config.blockCount(); b++) {
                blocks.add(new Block(vector(blk(b, "attn_norm")), matrix(blk(b, "attn_q")), matrix(blk(b, "attn_k")),
                        matrix(blk(b, "attn_v")), matrix(blk(b, "attn_output")), optionalVector(blk(b, "attn_q_norm")),
                        optionalVector(blk(b, "attn_k_norm")), vector(blk(b, "ffn_norm")), matrix(blk(b, "ffn_gate_inp"))));
            }
            outputNorm = vector("output_norm.weight");
            output = matrix(file.findTensor("output.weight").isPresent() ? "output.weight" : "token_embd.weight");
            cu.synchronize(stream);
        } catch (RuntimeException | Error e) {
            close();
            throw e;
        }
    }

    /** Why {@code file} cannot run on the GPU layer path, or null when it can. */
    static String unsupported(GgufFile file, ModelConfig config) {
        if (config.mla() != null) {
            return "latent attention (MLA) has no GPU kernels";
        }
        if (config.moe() == null) {
            return "dense models have no expert placement";
        }
        for (int b = 0; b < config.blockCount(); b++) {
            if (file.findTensor(blk(b, "ffn_gate_inp")).isEmpty()) {
                return "block " + b + " has a dense FFN";
            }
            if (file.findTensor(blk(b, "ffn_gate_shexp")).isPresent()) {
                return "shared experts have no GPU path yet";
            }
            for (String m : List.of("attn_q", "attn_k", "attn_v", "attn_output")) {
                GgmlType t = file.tensor(blk(b, m)).type();
                if (t != GgmlType.Q8_0) {
                    return blk(b, m) + " is " + t + " (the GPU attention takes Q8_0)";
                }
            }
            GgmlType router = file.tensor(blk(b, "ffn_gate_inp")).type();
            if (!LayerKernels.supports(router)) {
                return "router " + router + " has no GPU kernel";
            }
        }
        String head = file.findTensor("output.weight").isPresent() ? "output.weight" : "token_embd.weight";
        GgmlType t = file.tensor(head).type();
        return LayerKernels.supports(t) ? null : "output head " + t + " has no GPU kernel";
    }

    static String blk(int b, String name) {
        return "blk." + b + "." + name + ".weight";
    }

    Block block(int b) {
        return blocks.get(b);
    }

    long bytes() {
        return bytes;
    }

    private DeviceMatrix matrix(String name) {
        GgufTensorInfo t = file.tensor(name);
        return new DeviceMatrix(t.type(), upload(t), Math.toIntExact(t.dim(1)), Math.toIntExact(t.dim(0)));
    }

    /** A norm weight: F32 in llama.cpp's files (quantizers leave 1-D tensors alone). */
    private long vector(String name) {
        GgufTensorInfo t = file.tensor(name);
        if (t.type() != GgmlType.F32) {
            throw new IllegalArgumentException(name + " is " + t.type() + ", the GPU layer path reads F32 norms");
        }
        return upload(t);
    }

    private long optionalVector(String name) {
        return file.findTensor(name).isPresent() ? vector(name) : 0;
    }

    private long upload(GgufTensorInfo t) {
        MemorySegment data = file.data(t);
        long p = cu.malloc(data.byteSize());
        allocations.add(p);
        cu.copyToDevice(p, data, data.byteSize(), stream);
        bytes += data.byteSize();
        return p;
    }

    @Override
    public void close() {
        for (long p : allocations) {
            cu.free(p);
        }
        allocations.clear();
    }
}
