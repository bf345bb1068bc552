package dev.lazarus.kt.model;

import java.util.List;

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
 * @param imropeSections     qwen35moe's interleaved multi-section rope ({@code rope.dimension_sections}: time,
 *                           height, width, extra), null for a single-position rope
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
        float yarnLogMultiplier,
        int[] imropeSections) {

    /** Plain RoPE without scaling; handy for tests. */
    public static RopeConfig plain(RopeStyle style, int dimensions, float freqBase, int context) {
        return new RopeConfig(style, dimensions, freqBase, 1f, 0f, 1f, 32f, 1f, context, 0f, null);
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
        int[] sections = arch == Architecture.QWEN35MOE ? sections(md) : null;
        return new RopeConfig(arch.ropeStyle(), dims, base, freqScale, extFactor, attnFactor, betaFast, betaSlow,
                originalContext, logMul, sections);
    }

    private static int[] sections(Metadata md) {
        if (!(md.raw(md.key("rope.dimension_sections")).orElse(null) instanceof List<?> list) || list.size() < 4) {
            throw new ModelFormatException("qwen35moe needs rope.dimension_sections (4 sections)");
        }
        int[] s = new int[4];
        for (int i = 0; i < 4; i++) {
            s[i] = ((Number) list.get(i)).intValue();
        }
        if (s[0] < 0 || s[1] < 0 || s[2] < 0 || s[3] < 0 || s[0] + s[1] + s[2] + s[3] == 0) {
            throw new ModelFormatException("rope.dimension_sections " + List.of(s[0], s[1], s[2], s[3]));
        }
        return s;
    }

    /**
     * Whether IMROPE gives rotary pair {@code pair} the extra section's position, which is 0 for a text token
     * (llama.cpp's graph input fills time, height and width with the token's position and the extra one with 0), so
     * that pair is not rotated; ggml's mrope cache picks the section per pair as below.
     */
    boolean extraSection(int pair) {
        if (imropeSections == null) {
            return false;
        }
        int[] s = imropeSections;
        int sector = pair % (s[0] + s[1] + s[2] + s[3]);
        return !(sector % 3 == 1 && sector < 3 * s[1]) && !(sector % 3 == 2 && sector < 3 * s[2])
                && !(sector % 3 == 0 && sector < 3 * s[0]);
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
