package dev.lazarus.kt.model;

/** The attention half of a block: projections, positions, the cache, and the output projection. */
interface Attention {

    /**
     * Stores the batch's keys and values in their sequences' caches, attends, and returns the
     * output projection for each token.
     *
     * @param xn          the normalised block input per token
     * @param ropeTables  {@link Rope#table(int)} of each token's position
     */
    float[][] forward(ForwardBatch batch, float[][] ropeTables, float[][] xn);

    /** How many phases {@link #begin} has (always the same for this attention). */
    default int phases() {
        return 1;
    }

    /** {@link #forward} as phases of the caller's pool call; by default all of it where its one phase opens. */
    default PhasedStep begin(ForwardBatch batch, float[][] ropeTables, float[][] xn) {
        return PhasedStep.inOpen(() -> forward(batch, ropeTables, xn));
    }

    /** Floats this attention caches per position: keys, then values (0: values are the keys). */
    int keyWidth();

    int valueWidth();

    /** Floats of state this attention keeps per sequence whatever its length (a recurrent block's); 0 for most. */
    default int recurrentWidth() {
        return 0;
    }

    /** Values of one key head in the cache: the width a cache type's block size must divide. */
    int keyHeadWidth();

    /** Values of one value head (of the keys, where values are a view of them). */
    int valueHeadWidth();
}
