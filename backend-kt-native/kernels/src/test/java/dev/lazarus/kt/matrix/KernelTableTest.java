package dev.lazarus.kt.matrix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.kt.tensor.GgmlOrders;
import dev.lazarus.kt.tensor.KernelConfig;
import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.quant.legacy.Q4_0RepackedKernel;
import dev.lazarus.kt.quant.q4k.Q4KInt16InPlaceKernel;
import dev.lazarus.kt.quant.q4k.Q4KQ5KKernel;
import dev.lazarus.kt.quant.q6k.Q6KInt16Kernel;
import dev.lazarus.kt.tensor.NativeKernels;
import dev.lazarus.kt.tensor.VecDotType;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The one selection table, native rows and Java rows. The Java rows ({@link KernelTable#java}): every type activations have a form for
 * ({@link VecDotType#of}) has one for every use, and the rows keep llama-server's choices: only a dense matrix of a type it repacks has a GEMM
 * for a batch's fours, a routed expert never does, a 3-D slice is never read in a repacked order, and the K-quants it
 * does not repack take its tiled matmul from eight vectors. The native rows ({@link KernelTable#nativeRow},
 * {@link KernelTable#nativeCopy}, by kernel id, so they hold without the library): the same shape as the Java row of
 * the matrix (a GEMM only where the Java row has one, a tiled kernel only where it has one), the activations of the
 * type, never a slice, and every kernel the library has is named by some row.
 */
class KernelTableTest {

    /** The types llama-server's AVX-512 CPU backend repacks with a GEMM of its own (rows a multiple of 8). */
    private static final Set<GgmlType> REPACKED_WITH_GEMM = EnumSet.of(GgmlType.Q4_K, GgmlType.Q2_K);
    /** The K-quant layouts it multiplies in its tiled order where it does not repack them. */
    private static final Set<GgmlType> TILED = EnumSet.of(GgmlType.Q2_K, GgmlType.Q3_K, GgmlType.Q4_K, GgmlType.Q5_K,
            GgmlType.Q6_K, GgmlType.IQ4_XS, GgmlType.IQ2_XXS, GgmlType.IQ2_XS, GgmlType.IQ2_S, GgmlType.IQ3_XXS,
            GgmlType.IQ3_S, GgmlType.IQ1_S, GgmlType.IQ1_M);

    @Test
    void everyTypeTheEngineMultipliesHasAJavaRowForEveryUse() {
        int types = 0;
        for (GgmlType type : GgmlType.values()) {
            if (!multiplied(type)) {
                assertThatThrownBy(() -> KernelTable.java(type, false, KernelTable.Use.DENSE, GgmlOrders.AVX512_BF16)).as("%s", type)
                        .isInstanceOf(IllegalArgumentException.class);
                continue;
            }
            types++;
            for (KernelTable.Use use : KernelTable.Use.values()) {
                for (boolean repacked : new boolean[] {false, true}) {
                    KernelTable k = KernelTable.java(type, repacked, use, GgmlOrders.AVX512_BF16);
                    String what = "%s %s%s".formatted(type, use, repacked ? " repacked" : "");
                    assertThat(k.single()).as(what).isNotNull();
                    assertThat(k.group() != null).as(what + ": a GEMM for a batch's fours")
                            .isEqualTo(use == KernelTable.Use.DENSE && repacked && REPACKED_WITH_GEMM.contains(type));
                    if (!repacked) {
                        assertThat(k.tiled() != null).as(what + ": the tiled order from eight vectors").isEqualTo(TILED.contains(type));
                    }
                }
            }
        }
        assertThat(types).as("types with a Java row").isEqualTo(23);
    }

    @Test
    void aSliceOfA3dWeightIsNeverReadInARepackedOrder() {
        assertThat(KernelTable.inPlace(GgmlType.Q4_K, KernelConfig.auto()).single()).isSameAs(Q4KQ5KKernel.Q4_K_IN_PLACE);
        assertThat(KernelTable.inPlace(GgmlType.Q4_K, KernelConfig.auto()).tiled()).isSameAs(Q4KQ5KKernel.Q4_K_TILED);
        assertThat(KernelTable.inPlace(GgmlType.Q4_0, KernelConfig.auto()).single()).isNotSameAs(Q4_0RepackedKernel.INSTANCE);
        assertThat(KernelTable.select(GgmlType.Q4_K, 64, 256, KernelTable.Use.SLICE, KernelConfig.auto()).single())
                .as("no native kernel and no repacked order for a slice, even with rows a multiple of 8")
                .isSameAs(Q4KQ5KKernel.Q4_K_IN_PLACE);
    }

    @Test
    void javaRowsOfTheRepackedTypesTakeTheRepackedOrders() {
        assertThat(KernelTable.java(GgmlType.Q4_K, true, KernelTable.Use.DENSE, GgmlOrders.AVX512_BF16))
                .isEqualTo(new KernelTable(Q4KInt16InPlaceKernel.INSTANCE, Q4KInt16InPlaceKernel.GEMM, null));
        assertThat(KernelTable.java(GgmlType.Q4_K, true, KernelTable.Use.EXPERT, GgmlOrders.AVX512_BF16))
                .isEqualTo(new KernelTable(Q4KInt16InPlaceKernel.INSTANCE, null, null));
        assertThat(KernelTable.java(GgmlType.Q4_0, true, KernelTable.Use.DENSE, GgmlOrders.AVX512_BF16).single()).isSameAs(Q4_0RepackedKernel.INSTANCE);
        assertThat(KernelTable.java(GgmlType.Q6_K, true, KernelTable.Use.DENSE, GgmlOrders.AVX512_BF16))
                .as("Q6_K is never repacked on x86")
                .isEqualTo(new KernelTable(Q6KInt16Kernel.INSTANCE, null, Q6KInt16Kernel.TILED));
    }

    /** The types the native kernels read on ggml's blocks (the rest, and every slice, run in Java). */
    private static final Set<GgmlType> NATIVE = EnumSet.of(GgmlType.Q8_0, GgmlType.Q4_K, GgmlType.Q6_K, GgmlType.Q2_K,
            GgmlType.Q3_K, GgmlType.IQ4_XS, GgmlType.IQ4_NL, GgmlType.MXFP4, GgmlType.IQ2_XXS, GgmlType.IQ2_XS,
            GgmlType.IQ2_S, GgmlType.IQ3_XXS, GgmlType.IQ3_S, GgmlType.IQ1_S, GgmlType.IQ1_M);

    @Test
    void nativeRowsHaveTheShapeOfTheJavaRowOfTheSameMatrix() {
        for (GgmlType type : GgmlType.values()) {
            if (!multiplied(type)) {
                continue;
            }
            for (KernelTable.Use use : KernelTable.Use.values()) {
                for (int rows : new int[] {8, 16, 13}) {
                    KernelTable.Native n = KernelTable.nativeRow(type, rows, 256, use);
                    String what = "%s %s, %d rows".formatted(type, use, rows);
                    if (use == KernelTable.Use.SLICE || type == GgmlType.Q4_K && rows % 8 != 0) {
                        assertThat(n).as(what + ": Java").isNull();
                        continue;
                    }
                    assertThat(n != null).as(what + ": native").isEqualTo(NATIVE.contains(type));
                    if (n == null) {
                        continue;
                    }
                    KernelTable java = KernelTable.java(type, rows % 8 == 0, use, GgmlOrders.AVX512_BF16);
                    assertThat(n.group() != null).as(what + ": a GEMM").isEqualTo(java.group() != null);
                    assertThat(n.tiled() != null).as(what + ": a tiled kernel").isEqualTo(java.tiled() != null);
                    assertThat(Stream.of(n.single(), n.group(), n.tiled()).filter(Objects::nonNull))
                            .as(what + ": the type's activations").allMatch(k -> k.activation == VecDotType.of(type));
                }
            }
        }
    }

    @Test
    void nativeCopiesTakeTheSixteenRowLayoutsWhereTheyFit() {
        for (NativeKernels.Isa isa : NativeKernels.Isa.values()) {
            assertThat(KernelTable.nativeCopy(GgmlType.Q4_K, 16, 256, KernelTable.Use.DENSE, isa))
                    .isEqualTo(new KernelTable.Native(NativeKernels.Kernel.Q4K16_GEMV, NativeKernels.Kernel.Q4K16_GEMM, null));
            assertThat(KernelTable.nativeCopy(GgmlType.Q4_K, 16, 256, KernelTable.Use.EXPERT, isa))
                    .isEqualTo(new KernelTable.Native(NativeKernels.Kernel.Q4K16_GEMV, null, null));
            assertThat(KernelTable.nativeCopy(GgmlType.Q4_K, 8, 256, KernelTable.Use.EXPERT, isa)).as("8 rows").isNull();
            assertThat(KernelTable.nativeCopy(GgmlType.Q6_K, 16, 256, KernelTable.Use.EXPERT, isa)).isNull();
        }
        assertThat(KernelTable.nativeCopy(GgmlType.Q8_0, 16, 256, KernelTable.Use.EXPERT, NativeKernels.Isa.AVX512_VNNI))
                .isEqualTo(new KernelTable.Native(NativeKernels.Kernel.Q8_0_16, null, null));
        assertThat(KernelTable.nativeCopy(GgmlType.Q8_0, 16, 256, KernelTable.Use.EXPERT, NativeKernels.Isa.AVX2))
                .as("the AVX2 unit's 16-row Q8_0 kernel is scalar").isNull();
    }

    @Test
    void everyKernelOfTheLibraryIsNamedByARow() {
        Set<NativeKernels.Kernel> named = EnumSet.noneOf(NativeKernels.Kernel.class);
        for (GgmlType type : GgmlType.values()) {
            for (KernelTable.Use use : KernelTable.Use.values()) {
                for (int rows : new int[] {16, 13}) {
                    for (NativeKernels.Isa isa : NativeKernels.Isa.values()) {
                        for (KernelTable.Native n : new KernelTable.Native[] {KernelTable.nativeRow(type, rows, 256, use),
                                KernelTable.nativeCopy(type, rows, 256, use, isa)}) {
                            if (n != null) {
                                Stream.of(n.single(), n.group(), n.tiled()).filter(Objects::nonNull).forEach(named::add);
                            }
                        }
                    }
                }
            }
        }
        // the library has Q4_K's tiled order but no vec_dot on ggml's blocks: a Q4_K matrix it does not repack runs in Java
        assertThat(EnumSet.complementOf(EnumSet.copyOf(named))).containsExactly(NativeKernels.Kernel.Q4K_TILED);
    }

    /** Whether activations have a form for {@code type}'s weights ({@link VecDotType#of}): a type the engine multiplies. */
    private static boolean multiplied(GgmlType type) {
        try {
            return VecDotType.of(type) != null;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }
}
