package dev.lazarus.kt.tensor;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

/**
 * The vector species of the kernels: floats of the preferred width (at least 8 lanes so that the
 * byte species of the same lane count exists; 8 divides every block length) and the byte, short
 * and int species with the same number of lanes, so that one load of packed weights widens to
 * exactly one float vector.
 */
public final class Simd {

    public static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED.length() >= 8
            ? FloatVector.SPECIES_PREFERRED : FloatVector.SPECIES_256;
    public static final int L = F.length();
    public static final VectorSpecies<Byte> B = VectorSpecies.of(byte.class, VectorShape.forBitSize(L * 8));
    public static final VectorSpecies<Short> S = VectorSpecies.of(short.class, VectorShape.forBitSize(L * 16));
    public static final VectorSpecies<Integer> I = VectorSpecies.of(int.class, F.vectorShape());
    public static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    private Simd() {
    }

    /** acc + v·s. */
    public static FloatVector fma(FloatVector v, float s, FloatVector acc) {
        return v.fma(FloatVector.broadcast(F, s), acc);
    }

    /** The L bytes of {@code v}, widened (sign-extended) to floats. */
    public static FloatVector bytesToFloats(ByteVector v) {
        return (FloatVector) v.convertShape(VectorOperators.B2F, F, 0);
    }

    public static ByteVector bytes(MemorySegment s, long off) {
        return ByteVector.fromMemorySegment(B, s, off, LE);
    }

    /** L f16 values at {@code off} as floats (finite, subnormal, infinite and NaN alike). */
    public static FloatVector f16s(MemorySegment s, long off) {
        IntVector h = (IntVector) ShortVector.fromMemorySegment(S, s, off, LE).convertShape(VectorOperators.S2I, I, 0);
        IntVector sign = h.and(0x8000).lanewise(VectorOperators.LSHL, 16);
        IntVector magnitude = h.and(0x7fff);
        // moving the exponent-and-mantissa up by 13 bits gives the value scaled by 2^-112 (exact for
        // normals and subnormals); infinities and NaNs instead get the all-ones f32 exponent
        FloatVector finite = magnitude.lanewise(VectorOperators.LSHL, 13).reinterpretAsFloats().mul(0x1p112f);
        IntVector bits = finite.reinterpretAsInts()
                .blend(magnitude.lanewise(VectorOperators.LSHL, 13).or(0x7f800000), magnitude.compare(VectorOperators.GE, 0x7c00));
        return bits.or(sign).reinterpretAsFloats();
    }

    /** L bf16 values at {@code off} as floats. */
    public static FloatVector bf16s(MemorySegment s, long off) {
        IntVector h = (IntVector) ShortVector.fromMemorySegment(S, s, off, LE).convertShape(VectorOperators.S2I, I, 0);
        return h.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats();
    }
}
