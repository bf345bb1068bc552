package dev.lazarus.kt.gpu;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.gguf.GgufTensorInfo;
import dev.lazarus.kt.model.Architecture;
import dev.lazarus.kt.model.ModelConfig;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * Every weight the GPU layer path reads besides the routed experts, copied once from the mapped GGUF into
 * device memory in its stored layout: per block the norms, the router and the dense SwiGLU (a dense FFN or a
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

    DeviceWeights(CudaDriver cu, MemorySegment stream, GgufFile file, ModelConfig config) {
        this.cu = cu;
        this.stream = stream;
        this.file = file;
        try {
            for (int b = 0; b < config.blockCount(); b++) {
                boolean routed = hasRouter(file, b);
                SwiGluMatrices ffn = routed
                        ? (hasSharedExpert(file, b) ? swiGlu(b, "_shexp") : null)
                        : swiGlu(b, "");
                blocks.add(new Block(vector(blk(b, "attn_norm")), vector(blk(b, "ffn_norm")),
                        routed ? matrix(blk(b, "ffn_gate_inp")) : null, ffn));
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
        Architecture arch = config.architecture();
        if (arch == Architecture.GLM4MOE || arch == Architecture.GPT_OSS) {
            // their attention biases, post-attention norm, sinks, windows and expert biases have no device kernels
            return arch.ggufName() + " blocks have no GPU layer path yet";
        }
        for (int b = 0; b < config.blockCount(); b++) {
            String why = config.mla() != null ? MlaDeviceAttention.unsupported(file, config, b)
                    : GqaDeviceAttention.unsupported(file, b);
            if (why != null) {
                return why;
            }
            if (hasRouter(file, b)) {
                GgmlType router = file.tensor(blk(b, "ffn_gate_inp")).type();
                if (!LayerKernels.supports(router)) {
                    return "router " + router + " has no GPU kernel";
                }
            }
            if (!hasRouter(file, b) || hasSharedExpert(file, b)) {
                String suffix = hasRouter(file, b) ? "_shexp" : "";
                String ffn = requireOneType(file, "the GPU SwiGLU", blk(b, "ffn_gate" + suffix), blk(b, "ffn_up" + suffix),
                        blk(b, "ffn_down" + suffix));
                if (ffn != null) {
                    return ffn;
                }
            }
        }
        String head = file.findTensor("output.weight").isPresent() ? "output.weight" : "token_embd.weight";
        GgmlType t = file.tensor(head).type();
        return LayerKernels.supports(t) ? null : "output head " + t + " has no GPU kernel";
    }

    /** Null when tensor {@code name} is Q8_0, otherwise why {@code user} cannot take it. */
    static String requireQ8(GgufFile file, String name, String user) {
        GgmlType t = file.tensor(name).type();
        return t == GgmlType.Q8_0 ? null : name + " is " + t + " (" + user + " takes Q8_0)";
    }

    /**
     * Null when the tensors {@code names} share one type the GPU matrix kernels take (Q8_0, Q4_0, Q4_K, Q5_K, Q6_K,
     * F16, F32), otherwise
     * why {@code user} cannot take them.
     */
    static String requireOneType(GgufFile file, String user, String... names) {
        GgmlType first = file.tensor(names[0]).type();
        for (String n : names) {
            GgmlType t = file.tensor(n).type();
            if (!LayerKernels.supports(t) || t != first) {
                return n + " is " + t + " (" + user + " takes Q8_0, Q4_0, Q4_K, Q5_K, Q6_K, F16 or F32, one type for "
                        + String.join(", ", names) + ")";
            }
        }
        return null;
    }

    /** Whether block {@code b} routes to experts (the CPU path's test: leading dense blocks have no router). */
    static boolean hasRouter(GgufFile file, int b) {
        return file.findTensor(blk(b, "ffn_gate_inp")).isPresent();
    }

    private static boolean hasSharedExpert(GgufFile file, int b) {
        return file.findTensor(blk(b, "ffn_gate_shexp")).isPresent();
    }

    static String blk(int b, String name) {
        return "blk." + b + "." + name + ".weight";
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

    private SwiGluMatrices swiGlu(int b, String suffix) {
        return new SwiGluMatrices(matrix(blk(b, "ffn_gate" + suffix)), matrix(blk(b, "ffn_up" + suffix)),
                matrix(blk(b, "ffn_down" + suffix)));
    }

    /** Tensor {@code name} on the device as rows × cols of its first two dimensions (a 3-D tensor: slices behind each other). */
    DeviceMatrix matrix(String name) {
        GgufTensorInfo t = file.tensor(name);
        return new DeviceMatrix(t.type(), upload(t), Math.toIntExact(t.dim(1)), Math.toIntExact(t.dim(0)));
    }

    /** A norm weight: F32 in llama.cpp's files (quantizers leave 1-D tensors alone). */
    long vector(String name) {
        GgufTensorInfo t = file.tensor(name);
        if (t.type() != GgmlType.F32) {
            throw new IllegalArgumentException(name + " is " + t.type() + ", the GPU layer path reads F32 norms");
        }
        return upload(t);
    }

    boolean has(String name) {
        return file.findTensor(name).isPresent();
    }

    long optionalVector(String name) {
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
