package dev.lazarus.kt.fidelity;

/**
 * How the engine is teacher-forced on the oracle's path.
 *
 * <p>The oracle generated its path the way any server does: the prompt in one batch, then one token per step. A
 * matrix product over one row and one over many run different kernels with different summation orders (llama.cpp's
 * and kt-native's alike: GEMV against the repacked or tiled GEMM, per-expert batches in MoE layers), and on a model
 * whose activations are quantized a last-bit difference can flip a rounding step, an expert choice and then a
 * logit. So only {@link #STEPWISE} computes each position with the oracle's own kernels, and only it can show
 * bit-identical arithmetic as identical.
 */
public enum Forcing {
    /**
     * The prompt in one batch, then the oracle's tokens one decode step each, as the oracle generated them. Costs a
     * decode step per position (the same as generating); the free-running divergence comes with it, since the engine's
     * own greedy run takes exactly these steps until its first different choice.
     */
    STEPWISE,
    /**
     * Prompt and path in one forward pass: the cost of one prefill, but each generated position goes through the
     * batch kernels, which the oracle did not use for it. Measures a lower bound on agreement where the engine's
     * batch and decode paths round differently.
     */
    ONE_PASS
}
