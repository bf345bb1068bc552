package dev.lazarus.kt.gpu;

import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.model.MlaConfig;
import dev.lazarus.kt.model.ModelConfig;
import dev.lazarus.kt.model.RopeStyle;
import java.util.ArrayList;
import java.util.List;

/**
 * deepseek2's multi-head latent attention on the GPU, in the absorbed form of the CPU's LatentAttention
 * (GGUFs with {@code attn_k_b}/{@code attn_v_b}): queries directly or through the q LoRA (down, norm, up);
 * the kv_a projection gives [latent | key rope part], rotated and normed into the latent cache row (F16, one
 * row per position shared by all heads, what the host cache holds too); each head's q_nope is mapped into
 * latent space by its k_b slice, its q rope part appended, attention runs over the latent rows with the
 * latent as the values, each head's attended latent is decompressed by its v_b slice and the output
 * projection is added to the residual. YaRN is in the host's rope table and the score scale. Q8_0 weights.
 */
final class MlaDeviceAttention implements DeviceAttention {

    private record Weights(DeviceMatrix q, DeviceMatrix qDown, long qDownNorm, DeviceMatrix qUp, DeviceMatrix kvDown,
                           long kvNorm, DeviceMatrix keyAbsorb, DeviceMatrix valueDecompress, DeviceMatrix output) {}

    private final LayerKernels kernels;
    private final MlaConfig mla;
    private final int heads, width;
    private final boolean neox;
    private final float eps, scale;
    private final LayerKernels.Heads latentHeads;
    private final List<Weights> blocks = new ArrayList<>();
    private final long dQa, dQaNormed, dQaQ, dQ, dQQ, dKvpe, dFullQ, dLatent, dLatentQ, dAtt, dAttQ;

    MlaDeviceAttention(ModelConfig c, DeviceWeights w, LayerKernels kernels, Scratch scratch) {
        this.kernels = kernels;
        this.mla = c.mla();
        this.heads = c.headCount();
        this.width = mla.kvLoraRank() + mla.qkRopeDim();
        this.neox = c.rope().style() == RopeStyle.NEOX;
        this.eps = c.rmsEps();
        this.scale = c.rope().mlaScoreScale(mla.keyDim());
        // every query head attends the one latent row: a single "kv head" of the row's width, the latent as values
        this.latentHeads = new LayerKernels.Heads(heads, 1, width, mla.kvLoraRank(), mla.qkRopeDim(), neox, eps);
        for (int b = 0; b < c.blockCount(); b++) {
            boolean direct = w.has(DeviceWeights.blk(b, "attn_q"));
            blocks.add(new Weights(
                    direct ? w.matrix(DeviceWeights.blk(b, "attn_q")) : null,
                    direct ? null : w.matrix(DeviceWeights.blk(b, "attn_q_a")),
                    direct ? 0 : w.vector(DeviceWeights.blk(b, "attn_q_a_norm")),
                    direct ? null : w.matrix(DeviceWeights.blk(b, "attn_q_b")),
                    w.matrix(DeviceWeights.blk(b, "attn_kv_a_mqa")), w.vector(DeviceWeights.blk(b, "attn_kv_a_norm")),
                    w.matrix(DeviceWeights.blk(b, "attn_k_b")), w.matrix(DeviceWeights.blk(b, "attn_v_b")),
                    w.matrix(DeviceWeights.blk(b, "attn_output"))));
        }
        int qLora = Math.max(mla.qLoraRank(), 32);
        int qWidth = heads * mla.keyDim();
        this.dQa = scratch.allocate(qLora);
        this.dQaNormed = scratch.allocate(qLora);
        this.dQaQ = scratch.allocate(GpuLayerPath.q8Floats(qLora));
        this.dQ = scratch.allocate(qWidth);
        this.dQQ = scratch.allocate(GpuLayerPath.q8Floats(qWidth));
        this.dKvpe = scratch.allocate(width);
        this.dFullQ = scratch.allocate((long) heads * width);
        this.dLatent = scratch.allocate((long) heads * mla.kvLoraRank());
        this.dLatentQ = scratch.allocate(GpuLayerPath.q8Floats(heads * mla.kvLoraRank()));
        this.dAtt = scratch.allocate((long) heads * mla.valueDim());
        this.dAttQ = scratch.allocate(GpuLayerPath.q8Floats(heads * mla.valueDim()));
    }

    /** Why block {@code b}'s latent attention cannot run here, or null. */
    static String unsupported(GgufFile file, ModelConfig c, int b) {
        MlaConfig m = c.mla();
        if (file.findTensor(DeviceWeights.blk(b, "attn_k_b")).isEmpty()) {
            return "MLA with a fused attn_kv_b (decompressed layout) has no GPU path yet, only split attn_k_b/attn_v_b";
        }
        if (m.qkNopeDim() % 32 != 0 || m.keyDim() % 32 != 0 || m.kvLoraRank() % 32 != 0 || m.valueDim() % 32 != 0
                || m.qLoraRank() % 32 != 0 || m.kvLoraRank() + m.qkRopeDim() > LayerKernels.MAX_ROW) {
            return "MLA sizes (nope %d, rope %d, kv_lora %d, v %d, q_lora %d) beyond the GPU kernels' Q8_0 blocks or row limit"
                    .formatted(m.qkNopeDim(), m.qkRopeDim(), m.kvLoraRank(), m.valueDim(), m.qLoraRank());
        }
        List<String> names = file.findTensor(DeviceWeights.blk(b, "attn_q")).isPresent()
                ? List.of("attn_q", "attn_kv_a_mqa", "attn_k_b", "attn_v_b", "attn_output")
                : List.of("attn_q_a", "attn_q_b", "attn_kv_a_mqa", "attn_k_b", "attn_v_b", "attn_output");
        for (String n : names) {
            String why = DeviceWeights.requireQ8(file, DeviceWeights.blk(b, n), "the GPU latent attention");
            if (why != null) {
                return why;
            }
        }
        return null;
    }

    @Override
    public int keyWidth() {
        return width;
    }

    @Override
    public int valueWidth() {
        return 0;
    }

    @Override
    public int heads() {
        return heads;
    }

    @Override
    public void forward(int b, long xn, long xq, long x, DeviceKvCaches.Copy copy, long kvOut, long rope, int position,
                        long scores, int scoreStride) {
        Weights w = blocks.get(b);
        int kvLora = mla.kvLoraRank();
        if (w.q() != null) {
            kernels.matvec(w.q(), xn, xq, dQ, 1f, false);
        } else {
            kernels.matvec(w.qDown(), xn, xq, dQa, 1f, false);
            kernels.rmsNorm(dQa, w.qDownNorm(), dQaNormed, dQaQ, mla.qLoraRank(), eps);
            kernels.matvec(w.qUp(), dQaNormed, dQaQ, dQ, 1f, false);
        }
        kernels.matvec(w.kvDown(), xn, xq, dKvpe, 1f, false);
        kernels.mlaRopeStore(dQ, dKvpe, w.kvNorm(), rope, dFullQ, copy.keys(b), kvOut, heads, mla.keyDim(),
                mla.qkNopeDim(), kvLora, mla.qkRopeDim(), neox, position, eps);
        // q_nope of head h is Q8_0 blocks [h · keyDim / 32, ...) of the quantized query (nope, keyDim % 32 == 0)
        kernels.quantize(dQ, dQQ, heads * mla.keyDim());
        kernels.perHead(w.keyAbsorb(), heads, dQQ, blockBytes(mla.keyDim()), dFullQ, width);
        kernels.attention(dFullQ, copy.keys(b), copy.keys(b), width, scores, scoreStride, dLatent, latentHeads,
                position + 1, scale);
        kernels.quantize(dLatent, dLatentQ, heads * kvLora);
        kernels.perHead(w.valueDecompress(), heads, dLatentQ, blockBytes(kvLora), dAtt, mla.valueDim());
        kernels.quantize(dAtt, dAttQ, heads * mla.valueDim());
        kernels.matvec(w.output(), dAtt, dAttQ, x, 1f, true);
    }

    private static long blockBytes(int values) {
        return (long) values / 32 * 34;
    }
}
