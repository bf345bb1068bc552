package dev.lazarus.kt.model;

/**
 * The three matrices of one routed SwiGLU expert: gate and up (hidden × dim), down (dim × hidden), and its
 * activation and biases ({@link Glu#SWIGLU} unless gpt-oss).
 */
public record ExpertWeights(ExpertMatrix gate, ExpertMatrix up, ExpertMatrix down, Glu glu) {

    public ExpertWeights(ExpertMatrix gate, ExpertMatrix up, ExpertMatrix down) {
        this(gate, up, down, Glu.SWIGLU);
    }

    public long bytes() {
        return gate.bytes() + up.bytes() + down.bytes();
    }

    /** The CPU form: views over the same bytes. */
    public SwiGlu.Weights cpu() {
        return new SwiGlu.Weights(gate.matrix(), up.matrix(), down.matrix(), glu);
    }
}
