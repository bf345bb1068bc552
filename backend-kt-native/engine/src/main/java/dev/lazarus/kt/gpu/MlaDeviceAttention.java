package dev.lazarus.kt.gpu;

import dev.lazarus.kt.gguf.GgufTensorInfo;
import dev.lazarus.kt.model.BlockTensors;
import dev.lazarus.kt.model.MlaConfig;
import dev.lazarus.kt.model.ModelConfig;
import dev.lazarus.kt.model.ModelTensors;
import dev.lazarus.kt.model.RopeStyle;
import java.util.ArrayList;
import java.util.List;

/**
 * deepseek2's multi-head latent attention on the GPU, in both forms of the CPU's LatentAttention, whichever
 * the GGUF has. Queries directly or through the q LoRA (down, norm, up); the kv_a projection gives [latent |
 * key rope part], rotated and normed. <b>Absorbed</b> ({@code attn_k_b}/{@code attn_v_b}): that row is the
 * cache row (F16, one per position shared by all heads, what the host cache holds too); each head's q_nope is
 * mapped into latent space by its k_b slice, its q rope part appended, attention runs over the latent rows
 * with the latent as the values, and each head's attended latent is decompressed by its v_b slice.
 * <b>Decompressed</b> ({@code attn_kv_b}): kv_b expands the latent into per-head key and value parts, each key
 * completed by the shared rope part, and plain multi-head attention runs over them. Then the output
 * projection is added to the residual. YaRN is in the host's rope table and the score scale. Q8_0 weights.
 */
final class MlaDeviceAttention implements DeviceAttention {

    /** {@code keyAbsorb}, {@code valueDecompress}: absorbed form; {@code kvUp}: decompressed form. */
    private record Weights(DeviceMatrix q, DeviceMatrix qDown, long qDownNorm, DeviceMatrix qUp, DeviceMatrix kvDown,
                           long kvNorm, DeviceMatrix keyAbsorb, DeviceMatrix valueDecompress, DeviceMatrix kvUp,
                           DeviceMatrix output) {}

    private final LayerKernels kernels;
    private final MlaConfig mla;
    private final int heads, width;
    private final boolean neox;
    private final float eps, scale;
    private final boolean absorbed;
    private final LayerKernels.Heads attentionHeads;
    private final List<Weights> blocks = new ArrayList<>();
    private final long dQa, dQaNormed, dQaQ, dQ, dQQ, dKvpe, dFullQ, dLatent, dLatentQ, dAtt, dAttQ, dKv;

    MlaDeviceAttention(ModelConfig c, ModelTensors tensors, DeviceWeights w, LayerKernels kernels, Scratch scratch) {
        this.kernels = kernels;
        this.mla = c.mla();
        this.heads = c.headCount();
        this.width = mla.kvLoraRank() + mla.qkRopeDim();
        this.neox = c.rope().style() == RopeStyle.NEOX;
        this.eps = c.rmsEps();
        this.scale = c.rope().mlaScoreScale(mla.keyDim());
        this.absorbed = ((BlockTensors.Mla) tensors.block(0).attention()).splitKvB();
        // absorbed: every query head attends the one latent row, a single "kv head" of the row's width with the
        // latent as values; decompressed: one key and value head per query head
        this.attentionHeads = absorbed
                ? new LayerKernels.Heads(heads, 1, width, mla.kvLoraRank(), mla.qkRopeDim(), neox, eps)
                : new LayerKernels.Heads(heads, heads, mla.keyDim(), mla.valueDim(), mla.qkRopeDim(), neox, eps);
        for (BlockTensors block : tensors.blocks()) {
            BlockTensors.Mla a = (BlockTensors.Mla) block.attention();
            boolean direct = !a.queryLora();
            blocks.add(new Weights(
                    direct ? w.matrix(a.q()) : null,
                    direct ? null : w.matrix(a.qA()),
                    direct ? 0 : w.vector(a.qANorm()),
                    direct ? null : w.matrix(a.qB()),
                    w.matrix(a.kvAMqa()), w.vector(a.kvANorm()),
                    absorbed ? w.matrix(a.kB()) : null,
                    absorbed ? w.matrix(a.vB()) : null,
                    absorbed ? null : w.matrix(a.kvB()),
                    w.matrix(a.output())));
        }
        int qLora = Math.max(mla.qLoraRank(), 32);
        int qWidth = heads * mla.keyDim();
        this.dQa = scratch.allocate(qLora);
        this.dQaNormed = scratch.allocate(qLora);
        this.dQaQ = scratch.allocate(GpuLayerPath.q8Floats(qLora));
        this.dQ = scratch.allocate(qWidth);
        this.dQQ = scratch.allocate(GpuLayerPath.q8Floats(qWidth));
        this.dKvpe = scratch.allocate(width);
        this.dKv = scratch.allocate((long) heads * (mla.qkNopeDim() + mla.valueDim()));
        this.dFullQ = scratch.allocate((long) heads * width);
        this.dLatent = scratch.allocate((long) heads * mla.kvLoraRank());
        this.dLatentQ = scratch.allocate(GpuLayerPath.q8Floats(heads * mla.kvLoraRank()));
        this.dAtt = scratch.allocate((long) heads * mla.valueDim());
        this.dAttQ = scratch.allocate(GpuLayerPath.q8Floats(heads * mla.valueDim()));
    }

    /** Why a block's latent attention {@code a} cannot run here (in a model of {@code tensors}), or null. */
    static String unsupported(ModelTensors tensors, BlockTensors.Mla a, ModelConfig c) {
        MlaConfig m = c.mla();
        if (a.indexer() != null) {
            // the experts can still take the GPU tier (placement), with attention and the rest on the CPU
            return c.architecture().ggufName() + "'s lightning indexer (sparse attention) has no GPU kernels";
        }
        if (a.splitKvB() != ((BlockTensors.Mla) tensors.block(0).attention()).splitKvB()) {
            return a.kvAMqa().name() + "'s block has another MLA layout than block 0";
        }
        if (m.qkNopeDim() % 32 != 0 || m.keyDim() % 32 != 0 || m.kvLoraRank() % 32 != 0 || m.valueDim() % 32 != 0
                || m.qLoraRank() % 32 != 0 || m.kvLoraRank() + m.qkRopeDim() > LayerKernels.MAX_ROW) {
            return "MLA sizes (nope %d, rope %d, kv_lora %d, v %d, q_lora %d) beyond the GPU kernels' Q8_0 blocks or row limit"
                    .formatted(m.qkNopeDim(), m.qkRopeDim(), m.kvLoraRank(), m.valueDim(), m.qLoraRank());
        }
        List<GgufTensorInfo> matrices = new ArrayList<>(a.queryLora() ? List.of(a.qA(), a.qB()) : List.of(a.q()));
        matrices.addAll(a.splitKvB() ? List.of(a.kB(), a.vB()) : List.of(a.kvB()));
        matrices.addAll(List.of(a.kvAMqa(), a.output()));
        for (GgufTensorInfo t : matrices) {
            String why = DeviceWeights.requireQ8(t, "the GPU latent attention");
            if (why != null) {
                return why;
            }
        }
        return null;
    }

    @Override
    public int keyWidth() {
        return absorbed ? width : heads * mla.keyDim();
    }

    @Override
    public int valueWidth() {
        return absorbed ? 0 : heads * mla.valueDim();
    }

    @Override
    public int heads() {
        return heads;
    }

    @Override
    public void forward(int b, long xn, long xq, long x, DeviceKvCaches.Copy copy, long kvOut, long rope, long pos,
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
        if (absorbed) {
            kernels.mlaRopeStore(dQ, dKvpe, w.kvNorm(), rope, dFullQ, width, kvLora, copy.keys(b), kvOut, heads,
                    mla.qkNopeDim(), kvLora, mla.qkRopeDim(), neox, pos, eps);
            // q_nope of head h is Q8_0 blocks [h · keyDim / 32, ...) of the quantized query (nope, keyDim % 32 == 0)
            kernels.quantize(dQ, dQQ, heads * mla.keyDim());
            kernels.perHead(w.keyAbsorb(), heads, dQQ, blockBytes(mla.keyDim()), dFullQ, width);
            kernels.attention(dFullQ, copy.keys(b), copy.keys(b), width, scores, scoreStride, dLatent, attentionHeads,
                    pos, scale);
            kernels.quantize(dLatent, dLatentQ, heads * kvLora);
            kernels.perHead(w.valueDecompress(), heads, dLatentQ, blockBytes(kvLora), dAtt, mla.valueDim());
        } else {
            // q rotated in place; the normed latent row, unrounded, into the scratch behind the kv_a output
            kernels.mlaRopeStore(dQ, dKvpe, w.kvNorm(), rope, dQ, mla.keyDim(), mla.qkNopeDim(), 0, dFullQ, heads,
                    mla.qkNopeDim(), kvLora, mla.qkRopeDim(), neox, pos, eps);
            kernels.quantize(dFullQ, dLatentQ, kvLora);
            kernels.matvec(w.kvUp(), dFullQ, dLatentQ, dKv, 1f, false);
            kernels.mlaKvExpandStore(dKv, dFullQ, copy.keys(b), copy.values(b), kvOut, heads, mla.qkNopeDim(),
                    mla.valueDim(), kvLora, mla.qkRopeDim(), pos);
            kernels.attention(dQ, copy.keys(b), copy.values(b), valueWidth(), scores, scoreStride, dAtt,
                    attentionHeads, pos, scale);
        }
        kernels.quantize(dAtt, dAttQ, heads * mla.valueDim());
        kernels.matvec(w.output(), dAtt, dAttQ, x, 1f, true);
    }

    private static long blockBytes(int values) {
        return (long) values / 32 * 34;
    }
}
