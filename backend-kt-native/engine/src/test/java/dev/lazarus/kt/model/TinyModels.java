package dev.lazarus.kt.model;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.gguf.GgufWriter;
import java.nio.file.Path;
import java.util.Random;

/**
 * Tiny random-weight GGUFs for engine tests, written with the project's GGUF writer. Only what the
 * forward pass reads (no vocabulary): the backend tests use infra's synthetic models instead.
 */
public final class TinyModels {

    public static final int VOCAB = 64;
    public static final int DIM = 32;
    public static final int CONTEXT = 64;

    private TinyModels() {}

    /** qwen3moe: GQA with QK-norm, NEOX rope, 8 experts, top-2 softmax with renormalisation. */
    public static Path qwen3moe(Path dir, long seed) {
        Fixture f = new Fixture("qwen3moe", seed);
        f.common(4, 2, 16);
        f.w.putU32("qwen3moe.feed_forward_length", 64);
        f.w.putU32("qwen3moe.expert_count", 8);
        f.w.putU32("qwen3moe.expert_used_count", 2);
        f.w.putU32("qwen3moe.expert_feed_forward_length", 16);
        for (int b = 0; b < 2; b++) {
            f.gqaAttention(b, 4, 2, 16, true);
            f.experts(b, 8, 16);
        }
        return f.write(dir.resolve("qwen3moe-" + seed + ".gguf"));
    }

    /** Dense llama: GQA without QK-norm, normal rope, SwiGLU FFN. */
    public static Path llama(Path dir, long seed) {
        Fixture f = new Fixture("llama", seed);
        f.common(4, 2, 16);
        f.w.putU32("llama.feed_forward_length", 64);
        for (int b = 0; b < 2; b++) {
            f.gqaAttention(b, 4, 2, 16, false);
            f.dense(b, "ffn_gate", "ffn_up", "ffn_down", 64);
        }
        return f.write(dir.resolve("llama-" + seed + ".gguf"));
    }

    /**
     * deepseek2: MLA with a q-lora bottleneck, one leading dense block, then 8 experts in 4 groups
     * (2 used), sigmoid gating with selection bias, renormalised and scaled weights, a shared expert,
     * YaRN rope. {@code absorbed} picks attn_k_b/attn_v_b over attn_kv_b; both are derived from the
     * same random matrices, so the two files compute the same function.
     */
    public static Path deepseek2(Path dir, long seed, boolean absorbed) {
        int heads = 4;
        int kvLora = 32;
        int nope = 16;
        int rope = 16;
        int vDim = 16;
        Fixture f = new Fixture("deepseek2", seed);
        f.w.putU32("deepseek2.block_count", 2);
        f.w.putU32("deepseek2.embedding_length", DIM);
        f.w.putU32("deepseek2.context_length", CONTEXT);
        f.w.putU32("deepseek2.attention.head_count", heads);
        f.w.putU32("deepseek2.attention.head_count_kv", absorbed ? 1 : heads);
        f.w.putF32("deepseek2.attention.layer_norm_rms_epsilon", 1e-6f);
        f.w.putF32("deepseek2.rope.freq_base", 10000f);
        f.w.putU32("deepseek2.rope.dimension_count", rope);
        f.w.putString("deepseek2.rope.scaling.type", "yarn");
        f.w.putF32("deepseek2.rope.scaling.factor", 4f);
        f.w.putU32("deepseek2.rope.scaling.original_context_length", 16);
        f.w.putF32("deepseek2.rope.scaling.yarn_log_multiplier", 0.0707f);
        f.w.putU32("deepseek2.attention.q_lora_rank", 32);
        f.w.putU32("deepseek2.attention.kv_lora_rank", kvLora);
        if (absorbed) {
            f.w.putU32("deepseek2.attention.key_length", kvLora + rope);
            f.w.putU32("deepseek2.attention.value_length", kvLora);
            f.w.putU32("deepseek2.attention.key_length_mla", nope + rope);
            f.w.putU32("deepseek2.attention.value_length_mla", vDim);
        } else {
            f.w.putU32("deepseek2.attention.key_length", nope + rope);
            f.w.putU32("deepseek2.attention.value_length", vDim);
        }
        f.w.putU32("deepseek2.feed_forward_length", 48);
        f.w.putU32("deepseek2.leading_dense_block_count", 1);
        f.w.putU32("deepseek2.expert_count", 8);
        f.w.putU32("deepseek2.expert_used_count", 2);
        f.w.putU32("deepseek2.expert_feed_forward_length", 16);
        f.w.putU32("deepseek2.expert_shared_count", 1);
        f.w.putU32("deepseek2.expert_gating_func", 2);
        f.w.putF32("deepseek2.expert_weights_scale", 2.5f);
        f.w.putBool("deepseek2.expert_weights_norm", true);
        f.w.putU32("deepseek2.expert_group_count", 4);
        f.w.putU32("deepseek2.expert_group_used_count", 2);
        f.globals();
        for (int b = 0; b < 2; b++) {
            f.norm("blk." + b + ".attn_norm.weight", DIM);
            f.matrix("blk." + b + ".attn_q_a.weight", DIM, 32);
            f.norm("blk." + b + ".attn_q_a_norm.weight", 32);
            f.matrix("blk." + b + ".attn_q_b.weight", 32, heads * (nope + rope));
            f.matrix("blk." + b + ".attn_kv_a_mqa.weight", DIM, kvLora + rope);
            f.norm("blk." + b + ".attn_kv_a_norm.weight", kvLora);
            float[] kb = f.random(heads * kvLora * nope, 1 / Math.sqrt(nope));
            float[] vb = f.random(heads * vDim * kvLora, 1 / Math.sqrt(kvLora));
            if (absorbed) {
                f.w.addTensor("blk." + b + ".attn_k_b.weight", kb, new long[] {nope, kvLora, heads}, GgmlType.F32);
                f.w.addTensor("blk." + b + ".attn_v_b.weight", vb, new long[] {kvLora, vDim, heads}, GgmlType.F32);
            } else {
                f.w.addTensor("blk." + b + ".attn_kv_b.weight", kvB(kb, vb, heads, kvLora, nope, vDim),
                        new long[] {kvLora, heads * (nope + vDim)}, GgmlType.F32);
            }
            f.matrix("blk." + b + ".attn_output.weight", heads * vDim, DIM);
            f.norm("blk." + b + ".ffn_norm.weight", DIM);
            if (b == 0) {
                f.dense(b, "ffn_gate", "ffn_up", "ffn_down", 48);
            } else {
                f.experts(b, 8, 16);
                f.w.addTensor("blk." + b + ".exp_probs_b.bias", f.random(8, 0.05), new long[] {8}, GgmlType.F32);
                f.dense(b, "ffn_gate_shexp", "ffn_up_shexp", "ffn_down_shexp", 16);
            }
        }
        return f.write(dir.resolve("deepseek2-" + seed + (absorbed ? "-mla" : "-kvb") + ".gguf"));
    }

    /** kv_b rows per head: the k_nope rows (columns of k_b[h]), then the value rows (rows of v_b[h]). */
    private static float[] kvB(float[] kb, float[] vb, int heads, int kvLora, int nope, int vDim) {
        float[] out = new float[heads * (nope + vDim) * kvLora];
        for (int h = 0; h < heads; h++) {
            for (int j = 0; j < nope; j++) {
                int row = h * (nope + vDim) + j;
                for (int r = 0; r < kvLora; r++) {
                    out[row * kvLora + r] = kb[h * kvLora * nope + r * nope + j];
                }
            }
            for (int d = 0; d < vDim; d++) {
                int row = h * (nope + vDim) + nope + d;
                System.arraycopy(vb, h * vDim * kvLora + d * kvLora, out, row * kvLora, kvLora);
            }
        }
        return out;
    }

    private static final class Fixture {
        final GgufWriter w = new GgufWriter();
        final Random random;
        final String arch;

        Fixture(String arch, long seed) {
            this.arch = arch;
            this.random = new Random(seed);
            w.putString("general.architecture", arch);
            w.putString("general.name", "tiny synthetic " + arch);
        }

        void common(int heads, int kvHeads, int headDim) {
            w.putU32(arch + ".block_count", 2);
            w.putU32(arch + ".embedding_length", DIM);
            w.putU32(arch + ".context_length", CONTEXT);
            w.putU32(arch + ".attention.head_count", heads);
            w.putU32(arch + ".attention.head_count_kv", kvHeads);
            w.putU32(arch + ".attention.key_length", headDim);
            w.putU32(arch + ".attention.value_length", headDim);
            w.putF32(arch + ".attention.layer_norm_rms_epsilon", 1e-6f);
            w.putF32(arch + ".rope.freq_base", 10000f);
            w.putU32(arch + ".rope.dimension_count", headDim);
            globals();
        }

        void globals() {
            w.addTensor("token_embd.weight", random(VOCAB * DIM, 1), new long[] {DIM, VOCAB}, GgmlType.F32);
            norm("output_norm.weight", DIM);
            matrix("output.weight", DIM, VOCAB);
        }

        void gqaAttention(int b, int heads, int kvHeads, int headDim, boolean qkNorm) {
            norm("blk." + b + ".attn_norm.weight", DIM);
            matrix("blk." + b + ".attn_q.weight", DIM, heads * headDim);
            matrix("blk." + b + ".attn_k.weight", DIM, kvHeads * headDim);
            matrix("blk." + b + ".attn_v.weight", DIM, kvHeads * headDim);
            matrix("blk." + b + ".attn_output.weight", heads * headDim, DIM);
            if (qkNorm) {
                norm("blk." + b + ".attn_q_norm.weight", headDim);
                norm("blk." + b + ".attn_k_norm.weight", headDim);
            }
            norm("blk." + b + ".ffn_norm.weight", DIM);
        }

        void experts(int b, int n, int ffn) {
            matrix("blk." + b + ".ffn_gate_inp.weight", DIM, n);
            w.addTensor("blk." + b + ".ffn_gate_exps.weight", random(n * ffn * DIM, 1 / Math.sqrt(DIM)),
                    new long[] {DIM, ffn, n}, GgmlType.F32);
            w.addTensor("blk." + b + ".ffn_up_exps.weight", random(n * ffn * DIM, 1 / Math.sqrt(DIM)),
                    new long[] {DIM, ffn, n}, GgmlType.F32);
            w.addTensor("blk." + b + ".ffn_down_exps.weight", random(n * ffn * DIM, 1 / Math.sqrt(ffn)),
                    new long[] {ffn, DIM, n}, GgmlType.F32);
        }

        void dense(int b, String gate, String up, String down, int ffn) {
            matrix("blk." + b + "." + gate + ".weight", DIM, ffn);
            matrix("blk." + b + "." + up + ".weight", DIM, ffn);
            matrix("blk." + b + "." + down + ".weight", ffn, DIM);
        }

        void matrix(String name, int cols, int rows) {
            w.addTensor(name, random(rows * cols, 1 / Math.sqrt(cols)), new long[] {cols, rows}, GgmlType.F32);
        }

        void norm(String name, int n) {
            float[] v = random(n, 0.1);
            for (int i = 0; i < n; i++) {
                v[i] += 1f;
            }
            w.addTensor(name, v, new long[] {n}, GgmlType.F32);
        }

        float[] random(int n, double std) {
            float[] v = new float[n];
            for (int i = 0; i < n; i++) {
                v[i] = (float) (random.nextGaussian() * std);
            }
            return v;
        }

        Path write(Path path) {
            w.write(path);
            return path;
        }
    }
}
