package dev.lazarus.kt.model;

/**
 * Computes routed experts for one MoE block: the seam between the model, which routes tokens and
 * groups them by expert, and whoever holds the experts' weights (the mapped file by default; RAM
 * copies and a GPU under expert placement). Called by one thread of the forward pass at a time
 * (the one that opens the block's expert phase); an implementation may spread the work over other
 * threads or devices but returns only when all of it is done.
 */
@FunctionalInterface
public interface ExpertExecutor {

    /**
     * {@code result[j][t]} = expert {@code experts[j]} of block {@code layer} applied to
     * {@code inputs[j][t]}. Each expert appears once; its tokens are read once for the whole group.
     */
    float[][][] apply(int layer, int[] experts, float[][][] inputs);

    /**
     * The same computation as {@link #apply}, as a pass that the caller runs as one phase of its own pool call, or
     * null (the default) where this executor runs its experts its own way: then {@link #apply} is called instead.
     */
    default SwiGlu.Pass begin(int layer, int[] experts, float[][][] inputs) {
        return null;
    }
}
