package dev.lazarus.kt.tensor;

import java.util.Arrays;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * A Q8_K activation's quants as shorts in a permutation of each super-block that an int16 kernel reads (the quant
 * packages define theirs: {@code quant.q4k.Q4KForms}, {@code quant.q6k.Q6KForms}), written 16 shorts at a time:
 * where those 16 come from at most two of the block's 16 groups of 16 (the even or odd values of two neighbouring
 * groups), by ONE two-table select of the groups' int vectors; otherwise (two values from each of eight groups) by a
 * gather. Gathers for all orders were about three quarters of converting an activation, on the thread the other waits for.
 */
public final class Q8KShortOrder extends ActivationForm<short[]> {

    private static final VectorSpecies<Float> F = FloatVector.SPECIES_512;
    private static final VectorSpecies<Integer> I = IntVector.SPECIES_512;
    private static final VectorSpecies<Short> S = ShortVector.SPECIES_256;
    private static final int LANES = 16, GROUPS = 256 / LANES;

    /** Where the shorts of a super-block take their quants from. */
    @FunctionalInterface
    public interface Source {
        /** The quant (0..255) that short {@code t} of the 32 at {@code 128c + 32p} takes (c 0..1, p 0..3, t 0..31). */
        int of(int c, int p, int t);
    }

    /** {@code from[i]}: the quant short i takes. */
    private final int[] from = new int[256];
    /** Whether every 16 shorts come from at most two groups (else all are gathered). */
    private final boolean bySelect;
    /** Per 16 shorts: the two groups they come from; the select's lane indices into the two. */
    private final int[] first = new int[GROUPS], second = new int[GROUPS];
    private final int[] select = new int[256];

    /** @throws IllegalArgumentException if {@code source} is no permutation of the 256 quants */
    public Q8KShortOrder(Source source) {
        super(VecDotType.Q8_K);
        for (int c = 0; c < 2; c++) {
            for (int p = 0; p < 4; p++) {
                for (int t = 0; t < 32; t++) {
                    from[128 * c + 32 * p + t] = source.of(c, p, t);
                }
            }
        }
        if (Arrays.stream(from).distinct().filter(q -> q >= 0 && q < 256).count() != 256) {
            throw new IllegalArgumentException("not a permutation of a super-block's 256 quants");
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

    /** The quant that short {@code i} (0..255) of each super-block takes. */
    public int from(int i) {
        return from[i];
    }

    @Override
    protected short[] allocate(int capacity) {
        return new short[capacity];
    }

    @Override
    protected void write(Activation x, int b, short[] into) {
        write(x.values, 256 * b, into);
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
