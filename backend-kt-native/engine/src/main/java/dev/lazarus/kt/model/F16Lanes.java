package dev.lazarus.kt.model;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * F16 values held as their 16 bits (an F16 KV cache, 2 bytes a value as llama.cpp holds it) read as floats: the
 * exact widening of {@link Float#float16ToFloat}, 16 lanes at a time where the Vector API has no F16 conversion.
 */
final class F16Lanes {

    private static final VectorSpecies<Short> H16 = ShortVector.SPECIES_256;
    private static final VectorSpecies<Integer> I16 = IntVector.SPECIES_512;

    private F16Lanes() {}

    /** {@code h[off..off+16)} widened to floats. */
    static FloatVector load(short[] h, int off) {
        // sign-extended: bit 31 is the F16 sign
        IntVector bits = (IntVector) ShortVector.fromArray(H16, h, off).convertShape(VectorOperators.S2I, I16, 0);
        IntVector magnitude = bits.and(0x7FFF);
        IntVector shifted = magnitude.lanewise(VectorOperators.LSHL, 13);
        // exponent and mantissa moved under F32's, rebiased by 2^(127-15): exact for normal and subnormal values
        IntVector finite = shifted.reinterpretAsFloats().mul(0x1p112f).reinterpretAsInts();
        // exponent 31: infinities, and NaNs made quiet as the conversion makes them (adding 0 quiets a signalling one)
        IntVector special = shifted.or(0x7F800000).reinterpretAsFloats().add(0f).reinterpretAsInts();
        return finite.blend(special, magnitude.compare(VectorOperators.GE, 0x7C00))
                .or(bits.and(0x80000000)).reinterpretAsFloats();
    }

    /** {@code h[i]} widened to a float. */
    static float get(short[] h, int i) {
        return Float.float16ToFloat(h[i]);
    }
}
