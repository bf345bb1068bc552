package dev.lazarus.kt.tensor;

import java.util.Arrays;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The int16 copies of a Q8_K super-block's quants in the orders the int16 kernels read (see
 * {@link Activation}'s {@code int16}, {@code int16InPlace} and {@code int16Q6K}). Each is a permutation of the
 * 256 quants, written 16 shorts at a time: where those 16 come from at most two of the block's 16 groups of 16
 * (the in-place Q4_K and the Q6_K orders: the even or odd values of two neighbouring groups), by ONE two-table
 * select of the groups' int vectors; otherwise (the packed Q4_K order: two values from each of eight groups) by
 * a gather. Gathers for all three were about three quarters of converting an activation, on the thread the
 * other waits for.
 */
final class Q8KOrders {

    private static final VectorSpecies<Float> F = FloatVector.SPECIES_512;
    private static final VectorSpecies<Integer> I = IntVector.SPECIES_512;
    private static final VectorSpecies<Short> S = ShortVector.SPECIES_256;
    private static final int LANES = 16, GROUPS = 256 / LANES;

    /** Where each short of {@link Activation#int16} (the packed Q4_K kernels' {@code Q4KPacked.Order#SHORT_LANES}) takes its quant from. */
    static final Q8KOrders SHORT_LANES = new Q8KOrders((c, p, t) -> 32 * (t & 7) + 16 * c + 4 * p + (t >> 3));
    /** ... of {@link Activation#int16InPlace}. */
    static final Q8KOrders IN_PLACE = new Q8KOrders((c, p, t) -> 32 * (2 * (2 * c + (t >> 4)) + (p & 1)) + 2 * (t & 15) + (p >> 1));
    /** ... of {@link Activation#int16Q6K}. */
    static final Q8KOrders Q6K = new Q8KOrders((c, p, t) -> 128 * c + 32 * ((t >> 4) + 2 * (p & 1)) + 2 * (t & 15) + (p >> 1));

    @FunctionalInterface
    private interface Source {
        /** The quant that short {@code t} of the 32 at {@code 128c + 32p} takes. */
        int of(int c, int p, int t);
    }

    /** {@code from[i]}: the quant short i takes. */
    final int[] from = new int[256];
    /** Whether every 16 shorts come from at most two groups (else all are gathered). */
    private final boolean bySelect;
    /** Per 16 shorts: the two groups they come from; the select's lane indices into the two. */
    private final int[] first = new int[GROUPS], second = new int[GROUPS];
    private final int[] select = new int[256];

    private Q8KOrders(Source source) {
        for (int c = 0; c < 2; c++) {
            for (int p = 0; p < 4; p++) {
                for (int t = 0; t < 32; t++) {
                    from[128 * c + 32 * p + t] = source.of(c, p, t);
                }
            }
        }
        boolean selectable = true;
        for (int k = 0; k < GROUPS; k++) {
            int[] groups = Arrays.stream(from, LANES * k, LANES * k + LANES).map(q -> q / LANES).distinct().sorted().toArray();
            if (groups.length > 2) {
                selectable = false;
                continue;
            }
            first[k] = groups[0];
            second[k] = groups[groups.length - 1];
            for (int l = 0; l < LANES; l++) {
                int q = from[LANES * k + l];
                select[LANES * k + l] = (q / LANES == first[k] ? 0 : LANES) + q % LANES;
            }
        }
        bySelect = selectable;
    }

    /**
     * Writes this order of the super-block at {@code o}: {@code into[o + i] = quants[o + from[i]]}. No helper takes or
     * returns a vector here: one that C2 leaves out of line boxes it on the heap at every call.
     */
    void write(float[] quants, int o, short[] into) {
        if (bySelect) {
            for (int k = 0; k < GROUPS; k++) {
                IntVector a = (IntVector) FloatVector.fromArray(F, quants, o + LANES * first[k]).convert(VectorOperators.F2I, 0);
                IntVector b = (IntVector) FloatVector.fromArray(F, quants, o + LANES * second[k]).convert(VectorOperators.F2I, 0);
                IntVector v = IntVector.fromArray(I, select, LANES * k).selectFrom(a, b);
                ((ShortVector) v.convertShape(VectorOperators.I2S, S, 0)).intoArray(into, o + LANES * k);
            }
        } else {
            for (int k = 0; k < GROUPS; k++) {
                FloatVector v = FloatVector.fromArray(F, quants, o, from, LANES * k);
                ((ShortVector) v.convertShape(VectorOperators.F2S, S, 0)).intoArray(into, o + LANES * k);
            }
        }
    }
}
