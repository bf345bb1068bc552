package dev.lazarus.kt.gpu;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.gguf.GgufTensorInfo;
import dev.lazarus.kt.model.Architecture;
import dev.lazarus.kt.model.BlockTensors;
import dev.lazarus.kt.model.ModelConfig;
import dev.lazarus.kt.model.ModelTensors;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * Every weight the GPU layer path reads besides the routed experts, copied once from the mapped GGUF into
 * device memory in its stored layout, as the model's {@link ModelTensors} (made once by the model's assembler, the
 * same description the CPU blocks were built from) lists them: per block the norms, the router and the dense SwiGLU (a dense FFN or a
 * shared expert), the output norm and head here; the attention weights through {@link #matrix} and
 * {@link #vector} by the attention's own loader ({@link GqaDeviceAttention}, {@link MlaDeviceAttention}), so
 * that everything is freed together. {@link #unsupported} says why a model cannot take this path.
 */
final class DeviceWeights implements AutoCloseable {

    /** A SwiGLU network on the device: {@code gate}, {@code up}: hidden × dim; {@code down}: dim × hidden. */
    record SwiGluMatrices(DeviceMatrix gate, DeviceMatrix up, DeviceMatrix down) {
        int hidden() {
            return gate.rows();
        }
    }

    /**
     * One block's norms and FFN weights. {@code router} null: a dense FFN block, {@code ffn} is that FFN;
     * otherwise a routed-experts block and {@code ffn} its shared expert (added with weight 1, as the CPU's
     * MoeFeedForward adds it) or null.
     */
    record Block(long attnNorm, long ffnNorm, DeviceMatrix router, SwiGluMatrices ffn) {}

    private final CudaDriver cu;
    private final MemorySegment stream;
    private final GgufFile file;
    private final List<Long> allocations = new ArrayList<>();
    private final List<Block> blocks = new ArrayList<>();
    private long bytes;
    final long outputNorm;
    final DeviceMatrix output;

    DeviceWeights(CudaDriver cu, MemorySegment stream, GgufFile file, ModelTensors tensors) {
        this.cu = cu;
        this.stream = stream;
        this.file = file;
        try {
            for (BlockTensors b : tensors.blocks()) {
                BlockTensors.Experts experts = b.experts();
                SwiGluMatrices ffn = experts == null ? swiGlu(b.dense())
                        : experts.shared() == null ? null : swiGlu(experts.shared());
                blocks.add(new Block(vector(b.attnNorm()), vector(b.ffnNorm()),
                        experts == null ? null : matrix(experts.router()), ffn));
            }
            outputNorm = vector(tensors.outputNorm());
            output = matrix(tensors.output());
            cu.synchronize(stream);
        } catch (RuntimeException | Error e) {
            close();
            throw e;
        }
    }

    /** Why the model of {@code tensors} cannot run on the GPU layer path, or null when it can. */
    static String unsupported(ModelTensors tensors, ModelConfig config) {
        Architecture arch = config.architecture();
        if (arch == Architecture.GLM4MOE || arch == Architecture.GPT_OSS || arch.gatedDeltaNet()
                || arch == Architecture.MINIMAX_M2) {
            // their attention biases, post-attention norm, sinks, windows and expert biases have no device kernels,
            // nor qwen35moe's and qwen3next's DeltaNet blocks, output gate and gated shared expert, nor minimax-m2's
            // QK-norm across heads
            return arch.ggufName() + " blocks have no GPU layer path yet";
        }
        for (BlockTensors b : tensors.blocks()) {
            String why = switch (b.attention()) {
                case BlockTensors.Mla mla -> MlaDeviceAttention.unsupported(tensors, mla, config);
                case BlockTensors.Gqa gqa -> GqaDeviceAttention.unsupported(gqa);
                case BlockTensors.DeltaNet d -> "gated DeltaNet blocks have no GPU kernels";
            };
            if (why != null) {
                return why;
            }
            BlockTensors.Experts experts = b.experts();
            if (experts != null && !LayerKernels.supports(experts.router().type())) {
                return "router " + experts.router().type() + " has no GPU kernel";
            }
            BlockTensors.SwiGluTensors ffn = experts == null ? b.dense() : experts.shared();
            if (ffn != null) {
                why = requireOneType("the GPU SwiGLU", ffn.gate(), ffn.up(), ffn.down());
                if (why != null) {
                    return why;
                }
            }
        }
        GgmlType t = tensors.output().type();
        return LayerKernels.supports(t) ? null : "output head " + t + " has no GPU kernel";
    }

    /** Null when tensor {@code t} is Q8_0, otherwise why {@code user} cannot take it. */
    static String requireQ8(GgufTensorInfo t, String user) {
        return t.type() == GgmlType.Q8_0 ? null : t.name() + " is " + t.type() + " (" + user + " takes Q8_0)";
    }

    /**
     * Null when the tensors {@code tensors} share one type the GPU matrix kernels take (Q8_0, Q4_0, Q4_K, Q5_K, Q6_K,
     * F16, F32), otherwise why {@code user} cannot take them.
     */
    static String requireOneType(String user, GgufTensorInfo... tensors) {
        GgmlType first = tensors[0].type();
        for (GgufTensorInfo t : tensors) {
            if (!LayerKernels.supports(t.type()) || t.type() != first) {
                List<String> names = new ArrayList<>();
                for (GgufTensorInfo n : tensors) {
                    names.add(n.name());
                }
                return t.name() + " is " + t.type() + " (" + user + " takes Q8_0, Q4_0, Q4_K, Q5_K, Q6_K, F16 or F32, "
                        + "one type for " + String.join(", ", names) + ")";
            }
        }
        return null;
    }

    Block block(int b) {
        return blocks.get(b);
    }

    /** Widest dense FFN or shared expert (0 without any): what the hidden scratch must hold besides experts. */
    int widestFfn() {
        int max = 0;
        for (Block b : blocks) {
            max = b.ffn() == null ? max : Math.max(max, b.ffn().hidden());
        }
        return max;
    }

    long bytes() {
        return bytes;
    }

    private SwiGluMatrices swiGlu(BlockTensors.SwiGluTensors t) {
        return new SwiGluMatrices(matrix(t.gate()), matrix(t.up()), matrix(t.down()));
    }

    /** Tensor {@code t} on the device as rows × cols of its first two dimensions (a 3-D tensor: slices behind each other). */
    DeviceMatrix matrix(GgufTensorInfo t) {
        return new DeviceMatrix(t.type(), upload(t), Math.toIntExact(t.dim(1)), Math.toIntExact(t.dim(0)));
    }

    /** A norm weight: F32 in llama.cpp's files (quantizers leave 1-D tensors alone). */
    long vector(GgufTensorInfo t) {
        if (t.type() != GgmlType.F32) {
            throw new IllegalArgumentException(t.name() + " is " + t.type() + ", the GPU layer path reads F32 norms");
        }
        return upload(t);
    }

    /** {@link #vector}, or 0 for an absent (null) tensor. */
    long optionalVector(GgufTensorInfo t) {
        return t == null ? 0 : vector(t);
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
