package dev.lazarus.kt.model;

/**
 * The gated DeltaNet (linear attention) blocks of a hybrid model (qwen35moe, qwen3next), from llama.cpp's
 * {@code ssm.*} keys: {@code keyHeads} heads of keys and queries ({@code ssm.group_count}), {@code valueHeads} heads
 * of values ({@code ssm.time_step_rank}), every head {@code stateSize} wide ({@code ssm.state_size}), a causal
 * convolution of {@code convKernel} taps ({@code ssm.conv_kernel}) over the queries, keys and values; every
 * {@code fullAttentionInterval}-th block is ordinary attention instead.
 *
 * @param groupedHeads qwen3next's layout: a key head's value heads are consecutive (llama.cpp repeats each key head
 *                     in place; qwen35moe tiles the key heads instead), and one projection ({@code ssm_ba})
 *                     gives per key head its value heads' betas, then their alphas
 */
public record DeltaNetConfig(int keyHeads, int valueHeads, int stateSize, int convKernel, int fullAttentionInterval,
                             boolean groupedHeads) {

    public DeltaNetConfig {
        if (keyHeads <= 0 || valueHeads <= 0 || valueHeads % keyHeads != 0 || stateSize <= 0 || convKernel < 2
                || fullAttentionInterval <= 0) {
            throw new ModelFormatException("gated DeltaNet heads " + keyHeads + "/" + valueHeads + " of " + stateSize
                    + ", conv kernel " + convKernel + ", full attention every " + fullAttentionInterval);
        }
    }

    /** Null when the model has no {@code ssm.*} keys. */
    static DeltaNetConfig fromMetadata(Metadata md) {
        if (md.number("ssm.state_size").isEmpty()) {
            return null;
        }
        int valueHeads = md.requireInt("ssm.time_step_rank");
        int state = md.requireInt("ssm.state_size");
        if (md.requireInt("ssm.inner_size") != state * valueHeads) {
            throw new ModelFormatException("ssm.inner_size " + md.requireInt("ssm.inner_size") + " is not "
                    + valueHeads + " value heads of " + state);
        }
        return new DeltaNetConfig(md.requireInt("ssm.group_count"), valueHeads, state, md.requireInt("ssm.conv_kernel"),
                md.integer("full_attention_interval", 4),
                Architecture.fromGguf(md.architecture()) == Architecture.QWEN3NEXT);
    }

    /** The key (and query) head value head {@code h} reads. */
    public int keyHead(int h) {
        return groupedHeads ? h / (valueHeads / keyHeads) : h % keyHeads;
    }

    /** llama.cpp's default layout: block {@code b} is recurrent unless {@code (b + 1)} is a multiple of the interval. */
    public boolean isRecurrent(int block) {
        return (block + 1) % fullAttentionInterval != 0;
    }

    public int keyDim() {
        return keyHeads * stateSize;
    }

    public int valueDim() {
        return valueHeads * stateSize;
    }

    /** Channels the convolution runs over: queries, keys, values. */
    public int convChannels() {
        return 2 * keyDim() + valueDim();
    }

    /** Floats of one sequence's state in one block: the convolution's last inputs, then every value head's matrix. */
    public int stateFloats() {
        return convChannels() * (convKernel - 1) + valueHeads * stateSize * stateSize;
    }
}
