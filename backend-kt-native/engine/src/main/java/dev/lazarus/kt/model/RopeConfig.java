package dev.lazarus.kt.model;

/**
 * Rotary position embedding parameters, resolved the way llama.cpp resolves its context
 * parameters from the GGUF: frequency scale from the scaling factor, YaRN extrapolation on only
 * for {@code rope.scaling.type = yarn}, and the attention factor pre-divided by the magnitude
 * correction that ggml's rope multiplies back in (so a plain YaRN rope ends up unscaled).
 *
 * @param dimensions         how many leading dimensions of a head are rotated ({@code rope.dimension_count})
 * @param extFactor          YaRN ramp mix (1 for yarn, 0 otherwise)
 * @param attnFactor         magnitude passed to the rope kernel
 * @param originalContext    context length the ramp is computed against
 * @param yarnLogMultiplier  deepseek2's {@code mscale_all_dims} (the GGUF value / 0.1), 0 when absent
 */
public record RopeConfig(
        RopeStyle style,
        int dimensions,
        float freqBase,
        float freqScale,
        float extFactor,
        float attnFactor,
        float betaFast,
        float betaSlow,
        int originalContext,
        float yarnLogMultiplier) {

    /** Plain RoPE without scaling; handy for tests. */
    public static RopeConfig plain(RopeStyle style, int dimensions, float freqBase, int context) {
        return new RopeConfig(style, dimensions, freqBase, 1f, 0f, 1f, 32f, 1f, context, 0f);
    }

    static RopeConfig fromMetadata(Metadata md, Architecture arch, int headDim, int contextLength) {
        int dims = md.integer("rope.dimension_count", headDim);
        float base = md.real("rope.freq_base", 10000f);
        float factor = md.real("rope.scaling.factor", 0f);
        if (factor == 0f) {
            factor = md.real("rope.scale_linear", 0f);
        }
        String type = md.string("rope.scaling.type").orElse(factor > 0f ? "linear" : "none");
        float freqScale = factor == 0f || type.equals("none") ? 1f : 1f / factor;
        boolean yarn = type.equals("yarn");
        float extFactor = yarn ? 1f : 0f;
        int originalContext = md.integer("rope.scaling.original_context_length", contextLength);
        float logMul = md.real("rope.scaling.yarn_log_multiplier", 0f) / 0.1f;
        float betaFast = md.real("rope.scaling.yarn_beta_fast", 32f);
        float betaSlow = md.real("rope.scaling.yarn_beta_slow", 1f);

        float attnFactor = 1f;
        if (extFactor != 0f) {
            float scale = 1f / freqScale;
            if (logMul != 0f) {
                // deepseek2 keeps mscale == mscale_all_dims so the ratio is 1 (llama.cpp's
                // TAG_DEEPSEEK2_YARN_LOG_MUL_FIX); the kq scale carries the correction instead.
                float mscale = arch.latentAttention() && logMul != 1f ? logMul : 1f;
                attnFactor = yarnMscale(scale, mscale) / yarnMscale(scale, logMul);
            } else {
                attnFactor = yarnMscale(scale, 1f);
            }
            attnFactor *= 1f / (1f + 0.1f * (float) Math.log(scale));
        }
        attnFactor *= md.real("rope.scaling.attn_factor", 1f);
        return new RopeConfig(arch.ropeStyle(), dims, base, freqScale, extFactor, attnFactor, betaFast, betaSlow,
                originalContext, logMul);
    }

    private static float yarnMscale(float scale, float mscale) {
        return scale <= 1f ? 1f : 0.1f * mscale * (float) Math.log(scale) + 1f;
    }

    /**
     * deepseek2's attention score scale: YaRN's magnitude correction squared over sqrt(head size),
     * undoing the pre-division in {@link #attnFactor} first, as llama.cpp's graph does.
     */
    public float mlaScoreScale(int headDimK) {
        float logInv = (float) Math.log(1f / freqScale);
        float attnFactorOriginal = attnFactor * (1f + 0.1f * logInv);
        float mscale = attnFactorOriginal * (1f + 0.1f * yarnLogMultiplier * logInv);
        return mscale * mscale / (float) Math.sqrt(headDimK);
    }
}
