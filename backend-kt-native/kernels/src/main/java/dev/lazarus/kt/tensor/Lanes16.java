package dev.lazarus.kt.tensor;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * The lane shuffles and masks of the 16-lane (512-bit) reduction networks the K-quant kernels share: swaps of
 * lanes {@code i ^ k} for pairwise sums in ggml's order, the upper half and odd quads for blending two or four
 * rows into one vector. Static finals, so C2 folds them as the kernels' own constants.
 */
public final class Lanes16 {

    private static final VectorSpecies<Float> F = FloatVector.SPECIES_512;
    private static final VectorSpecies<Integer> I = IntVector.SPECIES_512;

    public static final VectorShuffle<Float> F_SWAP1 = VectorShuffle.fromOp(F, i -> i ^ 1);
    public static final VectorShuffle<Float> F_SWAP2 = VectorShuffle.fromOp(F, i -> i ^ 2);
    public static final VectorShuffle<Float> F_SWAP4 = VectorShuffle.fromOp(F, i -> i ^ 4);
    public static final VectorShuffle<Float> F_SWAP8 = VectorShuffle.fromOp(F, i -> i ^ 8);
    public static final VectorMask<Float> F_UPPER_HALF = VectorMask.fromLong(F, 0xFF00L);
    public static final VectorMask<Float> F_ODD_QUADS = VectorMask.fromLong(F, 0xF0F0L);

    public static final VectorShuffle<Integer> I_SWAP1 = VectorShuffle.fromOp(I, i -> i ^ 1);
    public static final VectorShuffle<Integer> I_SWAP2 = VectorShuffle.fromOp(I, i -> i ^ 2);
    public static final VectorShuffle<Integer> I_SWAP4 = VectorShuffle.fromOp(I, i -> i ^ 4);
    public static final VectorShuffle<Integer> I_SWAP8 = VectorShuffle.fromOp(I, i -> i ^ 8);
    /** Lanes 0, 2, .., 14 and again: the even lanes of a pairwise sum, twice. */
    public static final VectorShuffle<Integer> I_EVENS_TWICE = VectorShuffle.fromOp(I, i -> 2 * (i & 7));
    public static final VectorMask<Integer> I_UPPER_HALF = VectorMask.fromLong(I, 0xFF00L);
    public static final VectorMask<Integer> I_ODD_QUADS = VectorMask.fromLong(I, 0xF0F0L);

    private Lanes16() {
    }
}
