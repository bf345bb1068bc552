package dev.lazarus.kt.synthetic;

import dev.lazarus.kt.synthetic.ArchitectureTraits.Feature;
import dev.lazarus.kt.synthetic.SyntheticModels.Mla;
import dev.lazarus.kt.synthetic.SyntheticModels.Moe;
import dev.lazarus.kt.synthetic.SyntheticModels.Spec;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * The tensors of a synthetic model, named and shaped as llama.cpp's loader expects them. Shapes are in ggml
 * order: {@code shape[0]} is the row length (input features), {@code shape[1]} the rows (output features),
 * {@code shape[2]} the experts or heads. One block layout serves every architecture: attention (grouped-query,
 * optionally QK-normed, or latent) and feed-forward (dense, or routed experts with optional shared experts).
 */
final class TensorLayout {

    /** How a tensor's random values are drawn; see {@link RandomWeights}. */
    enum Init {
        EMBEDDING, MATRIX, OUTPUT, ROUTER, NORM, BIAS, SINK,
        /** A DeltaNet's convolution taps: scaled as a matrix, kept F32 (ggml's ssm_conv takes nothing else). */
        CONV,
        /** A DeltaNet's {@code ssm_a} ({@code -exp(A_log)}): negative, so the state decays. */
        DECAY
    }

    /**
     * One tensor. Its values are drawn for {@code source} (of {@code sourceShape}) and then passed through
     * {@code derive}: this lets split MLA tensors be exact re-layouts of the fused tensor with the same seed,
     * so the fused and split variants of a spec are the same model.
     */
    record Entry(String name, long[] shape, Init init, String source, long[] sourceShape, UnaryOperator<float[]> derive) {
        static Entry of(String name, Init init, long... shape) {
            return new Entry(name, shape, init, name, shape, UnaryOperator.identity());
        }

        long elements() {
            return Arrays.stream(shape).reduce(1, Math::multiplyExact);
        }

        /** Row length of the values the random stream is drawn for: the fan-in that scales them. */
        long fanIn() {
            return sourceShape[0];
        }
    }

    private final Spec spec;
    private final List<Entry> entries = new ArrayList<>();

    private TensorLayout(Spec spec) {
        this.spec = spec;
    }

    static List<Entry> of(Spec spec, int vocabSize) {
        TensorLayout l = new TensorLayout(spec);
        l.add("token_embd.weight", Init.EMBEDDING, spec.dim(), vocabSize);
        l.add("output_norm.weight", Init.NORM, spec.dim());
        if (!spec.tiedEmbeddings()) {
            l.add("output.weight", Init.OUTPUT, spec.dim(), vocabSize);
        }
        for (int i = 0; i < spec.layers(); i++) {
            l.block(i);
        }
        if (spec.architecture().has(Feature.NEXTN_BLOCK)) {
            l.nextnBlock(spec.layers());
        }
        return List.copyOf(l.entries);
    }

    private void block(int i) {
        add(blk(i, "attn_norm"), Init.NORM, spec.dim());
        if (spec.deltaNet() != null && spec.deltaNet().isRecurrent(i)) {
            deltaNet(i, spec.deltaNet());
        } else if (spec.mla() != null) {
            latentAttention(i, spec.mla());
        } else {
            groupedQueryAttention(i);
        }
        add(blk(i, spec.architecture().has(Feature.POST_ATTENTION_NORM) ? "post_attention_norm" : "ffn_norm"),
                Init.NORM, spec.dim());
        Moe moe = spec.moe();
        if (moe == null || i < moe.leadingDense()) {
            feedForward(i, "", spec.ffn());
        } else {
            experts(i, moe);
        }
    }

    /**
     * A NextN (multi-token prediction) block after the model's own, as GLM-4.5's GGUFs carry it: an ordinary block
     * plus the projection of [embedding; hidden state] and its norms. Left out of the forward pass; llama.cpp's
     * {@code draft-mtp} and the engine's MTP block run it apart. Random values: a random head drafts what it drafts.
     */
    private void nextnBlock(int i) {
        block(i);
        add(blk(i, "nextn.eh_proj"), Init.MATRIX, 2L * spec.dim(), spec.dim());
        add(blk(i, "nextn.enorm"), Init.NORM, spec.dim());
        add(blk(i, "nextn.hnorm"), Init.NORM, spec.dim());
        add(blk(i, "nextn.shared_head_norm"), Init.NORM, spec.dim());
    }

    /** qwen35moe's (or qwen3next's) linear attention block, shaped as llama.cpp's loader creates it. */
    private void deltaNet(int i, SyntheticModels.DeltaNet d) {
        long keyDim = (long) d.keyHeads() * d.stateSize();
        long valueDim = (long) d.valueHeads() * d.stateSize();
        if (d.fusedInput()) {
            add(blk(i, "ssm_in"), Init.MATRIX, spec.dim(), 2 * keyDim + 2 * valueDim);
        } else {
            add(blk(i, "attn_qkv"), Init.MATRIX, spec.dim(), 2 * keyDim + valueDim);
            add(blk(i, "attn_gate"), Init.MATRIX, spec.dim(), valueDim);
        }
        add(blk(i, "ssm_conv1d"), Init.CONV, d.convKernel(), 2 * keyDim + valueDim);
        add(bias(i, "ssm_dt"), Init.BIAS, d.valueHeads());
        add("blk." + i + ".ssm_a", Init.DECAY, d.valueHeads());
        if (spec.architecture().has(Feature.GROUPED_DELTA_NET)) {
            add(blk(i, "ssm_ba"), Init.MATRIX, spec.dim(), 2L * d.valueHeads());
        } else {
            add(blk(i, "ssm_beta"), Init.MATRIX, spec.dim(), d.valueHeads());
            add(blk(i, "ssm_alpha"), Init.MATRIX, spec.dim(), d.valueHeads());
        }
        add(blk(i, "ssm_norm"), Init.NORM, d.stateSize());
        add(blk(i, "ssm_out"), Init.MATRIX, valueDim, spec.dim());
    }

    private void groupedQueryAttention(int i) {
        int hd = spec.headDim();
        // qwen35moe's queries carry a gate per head: twice the rows
        int perHead = spec.architecture().has(Feature.DELTA_NET) ? 2 * hd : hd;
        add(blk(i, "attn_q"), Init.MATRIX, spec.dim(), (long) spec.heads() * perHead);
        add(blk(i, "attn_k"), Init.MATRIX, spec.dim(), (long) spec.kvHeads() * hd);
        add(blk(i, "attn_v"), Init.MATRIX, spec.dim(), (long) spec.kvHeads() * hd);
        add(blk(i, "attn_output"), Init.MATRIX, (long) spec.heads() * hd, spec.dim());
        ArchitectureTraits a = spec.architecture();
        if (a.qkNorm()) {
            boolean whole = a.has(Feature.WHOLE_QK_NORM);
            add(blk(i, "attn_q_norm"), Init.NORM, whole ? (long) spec.heads() * hd : hd);
            add(blk(i, "attn_k_norm"), Init.NORM, whole ? (long) spec.kvHeads() * hd : hd);
        }
        if (a.has(Feature.QKV_BIAS)) {
            add(bias(i, "attn_q"), Init.BIAS, (long) spec.heads() * hd);
            add(bias(i, "attn_k"), Init.BIAS, (long) spec.kvHeads() * hd);
            add(bias(i, "attn_v"), Init.BIAS, (long) spec.kvHeads() * hd);
        }
        if (a.has(Feature.OUTPUT_BIAS)) {
            add(bias(i, "attn_output"), Init.BIAS, spec.dim());
        }
        if (a.has(Feature.SINKS)) {
            add(blk(i, "attn_sinks"), Init.SINK, spec.heads());
        }
    }

    private void latentAttention(int i, Mla mla) {
        int heads = spec.heads();
        long qkHead = mla.qkNopeDim() + mla.qkRopeDim();
        if (mla.qLoraRank() > 0) {
            add(blk(i, "attn_q_a"), Init.MATRIX, spec.dim(), mla.qLoraRank());
            add(blk(i, "attn_q_a_norm"), Init.NORM, mla.qLoraRank());
            add(blk(i, "attn_q_b"), Init.MATRIX, mla.qLoraRank(), heads * qkHead);
        } else {
            add(blk(i, "attn_q"), Init.MATRIX, spec.dim(), heads * qkHead);
        }
        add(blk(i, "attn_kv_a_mqa"), Init.MATRIX, spec.dim(), mla.kvLoraRank() + mla.qkRopeDim());
        add(blk(i, "attn_kv_a_norm"), Init.NORM, mla.kvLoraRank());
        String fused = blk(i, "attn_kv_b");
        long[] fusedShape = {mla.kvLoraRank(), heads * (long) (mla.qkNopeDim() + mla.vHeadDim())};
        if (mla.splitKvB()) {
            entries.add(new Entry(blk(i, "attn_k_b"), new long[] {mla.qkNopeDim(), mla.kvLoraRank(), heads},
                    Init.MATRIX, fused, fusedShape, v -> MlaSplit.keyPart(v, mla, heads)));
            entries.add(new Entry(blk(i, "attn_v_b"), new long[] {mla.kvLoraRank(), mla.vHeadDim(), heads},
                    Init.MATRIX, fused, fusedShape, v -> MlaSplit.valuePart(v, mla, heads)));
        } else {
            entries.add(Entry.of(fused, Init.MATRIX, fusedShape));
        }
        add(blk(i, "attn_output"), Init.MATRIX, heads * (long) mla.vHeadDim(), spec.dim());
        if (mla.indexer() != null) {
            SyntheticModels.Indexer idx = mla.indexer();
            add(blk(i, "indexer.attn_q_b"), Init.MATRIX, mla.qLoraRank(), (long) idx.heads() * idx.headDim());
            add(blk(i, "indexer.attn_k"), Init.MATRIX, spec.dim(), idx.headDim());
            add(blk(i, "indexer.k_norm"), Init.NORM, idx.headDim());
            add(bias(i, "indexer.k_norm"), Init.BIAS, idx.headDim());
            add(blk(i, "indexer.proj"), Init.MATRIX, spec.dim(), idx.heads());
        }
    }

    private void feedForward(int i, String suffix, long width) {
        add(blk(i, "ffn_gate" + suffix), Init.MATRIX, spec.dim(), width);
        add(blk(i, "ffn_up" + suffix), Init.MATRIX, spec.dim(), width);
        add(blk(i, "ffn_down" + suffix), Init.MATRIX, width, spec.dim());
    }

    private void experts(int i, Moe moe) {
        String router = blk(i, "ffn_gate_inp");
        long[] routerShape = {spec.dim(), moe.experts()};
        entries.add(new Entry(router, routerShape, Init.ROUTER, router, routerShape,
                moe.routingSkew() == 0 ? UnaryOperator.identity() : RouterSkew.of(moe, spec.seed(), i, spec.dim())));
        if (moe.probsBias()) {
            add("blk." + i + ".exp_probs_b.bias", Init.BIAS, moe.experts());
        }
        add(blk(i, "ffn_gate_exps"), Init.MATRIX, spec.dim(), moe.expertFfn(), moe.experts());
        add(blk(i, "ffn_up_exps"), Init.MATRIX, spec.dim(), moe.expertFfn(), moe.experts());
        add(blk(i, "ffn_down_exps"), Init.MATRIX, moe.expertFfn(), spec.dim(), moe.experts());
        if (spec.architecture().has(Feature.EXPERT_BIASES)) {
            add(bias(i, "ffn_gate_inp"), Init.BIAS, moe.experts());
            add(bias(i, "ffn_gate_exps"), Init.BIAS, moe.expertFfn(), moe.experts());
            add(bias(i, "ffn_up_exps"), Init.BIAS, moe.expertFfn(), moe.experts());
            add(bias(i, "ffn_down_exps"), Init.BIAS, spec.dim(), moe.experts());
        }
        if (moe.shared() > 0) {
            feedForward(i, "_shexp", (long) moe.expertFfn() * moe.shared());
            if (spec.architecture().has(Feature.DELTA_NET)) {
                add(blk(i, "ffn_gate_inp_shexp"), Init.MATRIX, spec.dim());
            }
        }
    }

    private void add(String name, Init init, long... shape) {
        entries.add(Entry.of(name, init, shape));
    }

    private static String blk(int layer, String tensor) {
        return "blk." + layer + "." + tensor + ".weight";
    }

    private static String bias(int layer, String tensor) {
        return "blk." + layer + "." + tensor + ".bias";
    }

    /**
     * Re-layouts of the fused {@code attn_kv_b} ({@code kv_lora} columns; per head {@code nope} key rows then
     * {@code v} value rows) into llama.cpp's split tensors, as its converter does: {@code attn_k_b} holds each
     * head's key rows transposed ({@code [nope, kv_lora]} per head, row length nope), {@code attn_v_b} each
     * head's value rows as they are ({@code [kv_lora, v]} per head).
     */
    static final class MlaSplit {
        private MlaSplit() {
        }

        static float[] keyPart(float[] fused, Mla mla, int heads) {
            int r = mla.kvLoraRank(), nope = mla.qkNopeDim(), perHead = nope + mla.vHeadDim();
            float[] out = new float[heads * r * nope];
            for (int h = 0; h < heads; h++) {
                for (int j = 0; j < nope; j++) {
                    int fusedRow = (h * perHead + j) * r;
                    for (int c = 0; c < r; c++) {
                        out[(h * r + c) * nope + j] = fused[fusedRow + c];
                    }
                }
            }
            return out;
        }

        static float[] valuePart(float[] fused, Mla mla, int heads) {
            int r = mla.kvLoraRank(), nope = mla.qkNopeDim(), v = mla.vHeadDim(), perHead = nope + v;
            float[] out = new float[heads * v * r];
            for (int h = 0; h < heads; h++) {
                System.arraycopy(fused, (h * perHead + nope) * r, out, h * v * r, v * r);
            }
            return out;
        }
    }
}
