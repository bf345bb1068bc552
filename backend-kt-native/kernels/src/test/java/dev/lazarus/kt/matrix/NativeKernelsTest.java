package dev.lazarus.kt.matrix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.kt.tensor.KernelConfig;
import dev.lazarus.kt.gguf.GgmlCodec;
import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.quant.lowbit.SubBlockKQuantKernel;
import dev.lazarus.kt.quant.lowbit.TableBlockKernel;
import dev.lazarus.kt.quant.q4k.Q4KInt16InPlaceKernel;
import dev.lazarus.kt.quant.q4k.Q4KInt16Kernel;
import dev.lazarus.kt.quant.q4k.Q4KNativePacked;
import dev.lazarus.kt.quant.q4k.Q4KPacked;
import dev.lazarus.kt.quant.q4k.Q4KQ5KKernel;
import dev.lazarus.kt.quant.q6k.Q6KInt16Kernel;
import dev.lazarus.kt.quant.q8_0.Q8_0Kernel;
import dev.lazarus.kt.quant.q8_0.Q8_0NativePacked;
import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.NativeKernels;
import dev.lazarus.kt.tensor.RowKernel;
import dev.lazarus.kt.tensor.VecDotType;
import dev.lazarus.kt.tensor.WeightMatrix;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.function.Supplier;
import org.assertj.core.util.introspection.PropertyOrFieldSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The native kernels ({@link NativeKernels}) against the Java kernels of the same orders, bit for bit, on every
 * instruction set of the library this host runs (an AVX-512 VNNI host runs both units), on fresh random data every
 * run (the seed is in the failure message): encoded weights and raw random blocks, odd row counts, batches of 1 to
 * 19 vectors through the matrices that {@link WeightMatrices} makes with {@code -Dlazarus.kt.kernels=native} and
 * {@code =java}; the low-bit types (Q2_K, Q3_K, IQ4_XS, IQ4_NL, MXFP4, and the grid I-quants IQ2_XXS, IQ2_XS, IQ2_S,
 * IQ3_XXS, IQ3_S, IQ1_S, IQ1_M) on raw random blocks, with rows that
 * llama-server repacks and rows it does not, and odd numbers of 32-value blocks. Where the library was not built (no C compiler) the engine must run the Java kernels, and CI (which
 * has a compiler) must have built it.
 */
public class NativeKernelsTest {

    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** The native kernel and the Java kernel of the same order, per kernel. */
    private static RowKernel javaTwin(NativeKernels.Kernel kernel) {
        return switch (kernel) {
            case Q8_0, Q8_0_16 -> Q8_0Kernel.INSTANCE;
            case Q4K_GEMV, Q4K16_GEMV -> Q4KInt16InPlaceKernel.INSTANCE;
            case Q4K_GEMM, Q4K16_GEMM -> Q4KInt16InPlaceKernel.GEMM;
            case Q4K_TILED -> Q4KQ5KKernel.Q4_K_TILED;
            case Q6K -> Q6KInt16Kernel.INSTANCE;
            case Q6K_TILED -> Q6KInt16Kernel.TILED;
            case Q2K -> new SubBlockKQuantKernel(GgmlType.Q2_K, SubBlockKQuantKernel.Order.VEC_DOT);
            case Q2K_GEMV -> new SubBlockKQuantKernel(GgmlType.Q2_K, SubBlockKQuantKernel.Order.REPACKED_GEMV);
            case Q2K_GEMM -> new SubBlockKQuantKernel(GgmlType.Q2_K, SubBlockKQuantKernel.Order.REPACKED_GEMM);
            case Q2K_TILED -> new SubBlockKQuantKernel(GgmlType.Q2_K, SubBlockKQuantKernel.Order.TILED);
            case Q3K -> new SubBlockKQuantKernel(GgmlType.Q3_K, SubBlockKQuantKernel.Order.VEC_DOT);
            case Q3K_TILED -> new SubBlockKQuantKernel(GgmlType.Q3_K, SubBlockKQuantKernel.Order.TILED);
            case IQ4XS -> new SubBlockKQuantKernel(GgmlType.IQ4_XS, SubBlockKQuantKernel.Order.VEC_DOT);
            case IQ4XS_TILED -> new SubBlockKQuantKernel(GgmlType.IQ4_XS, SubBlockKQuantKernel.Order.TILED);
            case IQ4NL -> new TableBlockKernel(GgmlType.IQ4_NL, TableBlockKernel.Order.VEC_DOT);
            case IQ4NL_REPACKED -> new TableBlockKernel(GgmlType.IQ4_NL, TableBlockKernel.Order.REPACKED);
            case MXFP4 -> new TableBlockKernel(GgmlType.MXFP4, TableBlockKernel.Order.VEC_DOT);
            case MXFP4_REPACKED -> new TableBlockKernel(GgmlType.MXFP4, TableBlockKernel.Order.REPACKED);
            case IQ2XXS, IQ2XS, IQ2S, IQ3XXS, IQ3S, IQ1S, IQ1M ->
                    new SubBlockKQuantKernel(weightType(kernel), SubBlockKQuantKernel.Order.VEC_DOT);
            case IQ2XXS_TILED, IQ2XS_TILED, IQ2S_TILED, IQ3XXS_TILED, IQ3S_TILED, IQ1S_TILED, IQ1M_TILED ->
                    new SubBlockKQuantKernel(weightType(kernel), SubBlockKQuantKernel.Order.TILED);
        };
    }

    private static GgmlType weightType(NativeKernels.Kernel kernel) {
        return switch (kernel) {
            case Q8_0, Q8_0_16 -> GgmlType.Q8_0;
            case Q4K_GEMV, Q4K_GEMM, Q4K_TILED, Q4K16_GEMV, Q4K16_GEMM -> GgmlType.Q4_K;
            case Q6K, Q6K_TILED -> GgmlType.Q6_K;
            case Q2K, Q2K_GEMV, Q2K_GEMM, Q2K_TILED -> GgmlType.Q2_K;
            case Q3K, Q3K_TILED -> GgmlType.Q3_K;
            case IQ4XS, IQ4XS_TILED -> GgmlType.IQ4_XS;
            case IQ4NL, IQ4NL_REPACKED -> GgmlType.IQ4_NL;
            case MXFP4, MXFP4_REPACKED -> GgmlType.MXFP4;
            case IQ2XXS, IQ2XXS_TILED -> GgmlType.IQ2_XXS;
            case IQ2XS, IQ2XS_TILED -> GgmlType.IQ2_XS;
            case IQ2S, IQ2S_TILED -> GgmlType.IQ2_S;
            case IQ3XXS, IQ3XXS_TILED -> GgmlType.IQ3_XXS;
            case IQ3S, IQ3S_TILED -> GgmlType.IQ3_S;
            case IQ1S, IQ1S_TILED -> GgmlType.IQ1_S;
            case IQ1M, IQ1M_TILED -> GgmlType.IQ1_M;
        };
    }

    @Test
    void theLibraryLoadsWhereItWasBuiltAndTheJavaKernelsRunWhereNot() {
        if (NativeKernels.best().isEmpty()) {
            assertThat(System.getenv("CI")).as("CI builds the native kernels: " + NativeKernels.unavailableReason())
                    .isNotEqualTo("true");
            assertThat(KernelConfig.fromSystemProperties().nativeSelected()).isFalse();
            assertThat(Kernels.describe(KernelConfig.fromSystemProperties())).startsWith("java-vector-");
            return;
        }
        assertThat(KernelConfig.fromSystemProperties().nativeSelected()).isTrue();
        assertThat(Kernels.describe(KernelConfig.fromSystemProperties())).isEqualTo("native-" + NativeKernels.best().orElseThrow().label);
        assertThat(WeightMatrices.defaults().of(GgmlType.Q8_0, MemorySegment.ofArray(new byte[34 * 8]), 8, 32))
                .extracting("kernel").isInstanceOf(NativeRowKernel.class);
        try (var ignored = withKernels("java")) {
            assertThat(Kernels.describe(KernelConfig.fromSystemProperties())).startsWith("java-vector-");
            assertThat(WeightMatrices.defaults().of(GgmlType.Q8_0, MemorySegment.ofArray(new byte[34 * 8]), 8, 32))
                    .extracting("kernel").isSameAs(Q8_0Kernel.INSTANCE);
        }
    }

    /**
     * The selection table's native rows ({@link KernelTable#nativeRow}, {@link KernelTable#nativeCopy}): by default native for Q8_0
     * and Q6_K, Q4_K copied at load (RAM-tier experts, repacked dense matrices) native on {@link Q4KNativePacked}'s
     * 16-row layout (dense ones by {@link WeightMatrices#repacked}), Q4_K read in place native on ggml's blocks;
     * {@code java} the Java kernels everywhere, the copies in {@link Q4KPacked}'s layout.
     */
    /** Native weights go to the library as a bare address (no arena acquire per call): read all the same, refused once closed. */
    @Test
    void weightsInAnArenaAreReadAsOnTheHeapAndRefusedOnceItIsClosed() {
        if (NativeKernels.best().isEmpty()) {
            assertThat(System.getenv("CI")).as(NativeKernels.unavailableReason()).isNotEqualTo("true");
            return;
        }
        int rows = 8, cols = 64;
        long rowBytes = 34L * cols / 32;
        Random rnd = new Random(11);
        byte[] bytes = GgmlCodec.encode(GgmlType.Q8_0, KernelEquivalenceTest.gaussian(rnd, rows * cols));
        Activation x = Activation.allocate(VecDotType.of(GgmlType.Q8_0), cols).set(KernelEquivalenceTest.gaussian(rnd, cols));
        NativeRowKernel kernel = NativeRowKernel.of(NativeKernels.Kernel.Q8_0);
        float[] onHeap = new float[rows];
        float[] inArena = new float[rows];
        kernel.dotRows(MemorySegment.ofArray(bytes), rowBytes, x, cols, onHeap, 0, rows);
        Arena arena = Arena.ofShared();
        MemorySegment w = arena.allocate(bytes.length, 64).copyFrom(MemorySegment.ofArray(bytes));
        kernel.dotRows(w, rowBytes, x, cols, inArena, 0, rows);
        assertThat(inArena).containsExactly(onHeap);
        arena.close();
        assertThatThrownBy(() -> kernel.dotRows(w, rowBytes, x, cols, inArena, 0, rows))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    }

    @Test
    void byDefaultQ4KRunsNativeCopiedIntoTheSixteenRowLayoutOrInPlace() {
        if (NativeKernels.best().isEmpty()) {
            assertThat(System.getenv("CI")).as(NativeKernels.unavailableReason()).isNotEqualTo("true");
            try (var ignored = withKernels("auto")) {
                assertThat(KernelConfig.fromSystemProperties().nativeSelected()).isFalse();
            }
            return;
        }
        int rows = 16, cols = 256;
        MemorySegment q4k = MemorySegment.ofArray(new byte[144 * rows]);
        MemorySegment q6k = MemorySegment.ofArray(new byte[210 * rows]);
        MemorySegment q80 = MemorySegment.ofArray(new byte[34 * rows * cols / 32]);
        try (var ignored = withKernels("auto")) {
            assertThat(WeightMatrices.defaults().of(GgmlType.Q4_K, q4k, rows, cols)).extracting("kernel", "groupKernel")
                    .allMatch(k -> k instanceof NativeRowKernel n && !n.packed());
            assertThat(WeightMatrices.defaults().expert(GgmlType.Q4_K, q4k, rows, cols)).extracting("kernel")
                    .matches(k -> ((NativeRowKernel) k).kernel == NativeKernels.Kernel.Q4K_GEMV);
            WeightMatrix copied = WeightMatrices.defaults().copiedExpert(GgmlType.Q4_K, q4k, rows, cols, true, Arena.ofAuto());
            assertThat(copied).extracting("kernel").isInstanceOf(NativeRowKernel.class)
                    .matches(k -> ((NativeRowKernel) k).kernel == NativeKernels.Kernel.Q4K16_GEMV);
            assertThat(WeightMatrices.defaults().copiedExpertBytes(GgmlType.Q4_K, 144L * rows, rows, cols, true))
                    .isEqualTo(Q4KNativePacked.bytes(rows, cols));
            assertThat(WeightMatrices.defaults().repacked(GgmlType.Q4_K, q4k, rows, cols, Arena.ofAuto()))
                    .extracting("kernel", "groupKernel").allMatch(k -> k instanceof NativeRowKernel n && n.packed());
            // rows the 16-row layout does not take: a plain copy, the native kernel on ggml's blocks
            assertThat(WeightMatrices.defaults().copiedExpert(GgmlType.Q4_K, q4k.asSlice(0, 144 * 8), 8, cols, true, Arena.ofAuto()))
                    .extracting("kernel").matches(k -> ((NativeRowKernel) k).kernel == NativeKernels.Kernel.Q4K_GEMV);
            assertThat(WeightMatrices.defaults().copiedExpertBytes(GgmlType.Q4_K, 144L * 8, 8, cols, true)).isEqualTo(144L * 8);
            assertThat(WeightMatrices.defaults().of(GgmlType.Q8_0, q80, rows, cols)).extracting("kernel")
                    .isInstanceOf(NativeRowKernel.class);
            // Q8_0 copied at load: the 16-row layout where AVX-512 VNNI runs (its vpdpbusd kernel), else ggml's blocks
            NativeKernels.Kernel q80Copied = NativeKernels.best().orElseThrow() == NativeKernels.Isa.AVX512_VNNI
                    ? NativeKernels.Kernel.Q8_0_16 : NativeKernels.Kernel.Q8_0;
            assertThat(WeightMatrices.defaults().copiedExpert(GgmlType.Q8_0, q80, rows, cols, true, Arena.ofAuto()))
                    .extracting("kernel").matches(k -> ((NativeRowKernel) k).kernel == q80Copied);
            assertThat(WeightMatrices.defaults().repacked(GgmlType.Q8_0, q80, rows, cols, Arena.ofAuto()))
                    .extracting("kernel").matches(k -> ((NativeRowKernel) k).kernel == q80Copied);
            assertThat(WeightMatrices.defaults().copiedExpertBytes(GgmlType.Q8_0, 34L * rows * cols / 32, rows, cols, true))
                    .isEqualTo(34L * rows * cols / 32);
            assertThat(WeightMatrices.defaults().copiedExpert(GgmlType.Q8_0, q80.asSlice(0, 34 * 8 * cols / 32), 8, cols, true,
                    Arena.ofAuto())).extracting("kernel").matches(k -> ((NativeRowKernel) k).kernel == NativeKernels.Kernel.Q8_0);
            assertThat(WeightMatrices.defaults().of(GgmlType.Q6_K, q6k, rows, cols)).extracting("kernel")
                    .isInstanceOf(NativeRowKernel.class);
        }
        try (var ignored = withKernels("java")) {
            assertThat(WeightMatrices.defaults().of(GgmlType.Q4_K, q4k, rows, cols)).extracting("kernel")
                    .isSameAs(Q4KInt16InPlaceKernel.INSTANCE);
            assertThat(WeightMatrices.defaults().copiedExpert(GgmlType.Q4_K, q4k, rows, cols, true, Arena.ofAuto()))
                    .extracting("kernel").isInstanceOf(Q4KInt16Kernel.class);
            assertThat(WeightMatrices.defaults().copiedExpertBytes(GgmlType.Q4_K, 144L * rows, rows, cols, true))
                    .isEqualTo(Q4KPacked.bytes(rows, cols));
            assertThat(WeightMatrices.defaults().copiedExpert(GgmlType.Q8_0, q80, rows, cols, true, Arena.ofAuto()))
                    .extracting("kernel").isSameAs(Q8_0Kernel.INSTANCE);
        }
    }

    /**
     * The low-bit types take the native kernels wherever the library loads (their Java kernels are scalar reference
     * loops), in llama-server's orders by row count: Q2_K, IQ4_NL, MXFP4 with rows a multiple of 8 repacked; the grid
     * I-quants vec_dot and tiled at any row count.
     */
    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"Q2_K", "Q3_K", "IQ4_XS", "IQ4_NL", "MXFP4", "IQ2_XXS", "IQ2_XS",
            "IQ2_S", "IQ3_XXS", "IQ3_S", "IQ1_S", "IQ1_M"})
    void lowBitTypesTakeTheNativeKernelsByDefault(GgmlType type) {
        int cols = 256;
        MemorySegment w = MemorySegment.ofArray(new byte[(int) type.bytesFor(16L * cols)]);
        if (NativeKernels.best().isEmpty()) {
            assertThat(System.getenv("CI")).as(NativeKernels.unavailableReason()).isNotEqualTo("true");
            assertThat(WeightMatrices.defaults().of(type, w, 11, cols)).extracting("kernel").isNotInstanceOf(NativeRowKernel.class);
            return;
        }
        record Expect(int rows, NativeKernels.Kernel single, NativeKernels.Kernel group, NativeKernels.Kernel tiled) { }
        List<Expect> expected = switch (type) {
            case Q2_K -> List.of(new Expect(8, NativeKernels.Kernel.Q2K_GEMV, NativeKernels.Kernel.Q2K_GEMM, null),
                    new Expect(11, NativeKernels.Kernel.Q2K, null, NativeKernels.Kernel.Q2K_TILED));
            case Q3_K -> List.of(new Expect(8, NativeKernels.Kernel.Q3K, null, NativeKernels.Kernel.Q3K_TILED));
            case IQ4_XS -> List.of(new Expect(11, NativeKernels.Kernel.IQ4XS, null, NativeKernels.Kernel.IQ4XS_TILED));
            case IQ4_NL -> List.of(new Expect(8, NativeKernels.Kernel.IQ4NL_REPACKED, null, null),
                    new Expect(11, NativeKernels.Kernel.IQ4NL, null, null));
            case MXFP4 -> List.of(new Expect(16, NativeKernels.Kernel.MXFP4_REPACKED, null, null),
                    new Expect(11, NativeKernels.Kernel.MXFP4, null, null));
            default -> {
                NativeKernels.Kernel single = gridKernel(type), tiled = NativeKernels.Kernel.values()[single.ordinal() + 1];
                assertThat(weightType(tiled)).isEqualTo(type);
                yield List.of(new Expect(8, single, null, tiled), new Expect(11, single, null, tiled));
            }
        };
        for (Expect e : expected) {
            MemorySegment data = w.asSlice(0, type.bytesFor((long) e.rows() * cols));
            try (var ignored = withKernels("auto")) {
                WeightMatrix m = WeightMatrices.defaults().of(type, data, e.rows(), cols);
                assertThat(m).as("%s, %d rows", type, e.rows()).extracting(x -> kernelOf(x, "kernel"),
                        x -> kernelOf(x, "groupKernel"), x -> kernelOf(x, "tiledKernel"))
                        .containsExactly(e.single(), e.group(), e.tiled());
            }
            try (var ignored = withKernels("java")) {
                assertThat(WeightMatrices.defaults().of(type, data, e.rows(), cols)).extracting("kernel")
                        .isInstanceOfAny(SubBlockKQuantKernel.class, TableBlockKernel.class);
            }
        }
    }

    /** The grid I-quant's vec_dot kernel (its tiled one follows it). */
    private static NativeKernels.Kernel gridKernel(GgmlType type) {
        return switch (type) {
            case IQ2_XXS -> NativeKernels.Kernel.IQ2XXS;
            case IQ2_XS -> NativeKernels.Kernel.IQ2XS;
            case IQ2_S -> NativeKernels.Kernel.IQ2S;
            case IQ3_XXS -> NativeKernels.Kernel.IQ3XXS;
            case IQ3_S -> NativeKernels.Kernel.IQ3S;
            case IQ1_S -> NativeKernels.Kernel.IQ1S;
            case IQ1_M -> NativeKernels.Kernel.IQ1M;
            default -> throw new IllegalArgumentException(type.name());
        };
    }

    private static NativeKernels.Kernel kernelOf(WeightMatrix m, String field) {
        Object k = PropertyOrFieldSupport.EXTRACTION.getValueOf(field, m);
        return k == null ? null : ((NativeRowKernel) k).kernel;
    }

    @ParameterizedTest
    @EnumSource(NativeKernels.Kernel.class)
    void eachKernelEqualsItsJavaTwinBitForBit(NativeKernels.Kernel kernel) {
        for (NativeKernels.Isa isa : hostIsas()) {
            GgmlType type = weightType(kernel);
            for (int pass = 0; pass < 2; pass++) {
                boolean raw = pass == 1 || !encodes(type); // the engine does not write the low-bit types
                long seed = System.nanoTime();
                Random rnd = new Random(seed);
                NativeRowKernel n = NativeRowKernel.of(kernel, isa);
                // the 16-row layout takes whole groups of rows; the others odd counts
                int rows = n.packed() ? 16 * (1 + rnd.nextInt(3)) : 1 + 2 * rnd.nextInt(6), cols = randomCols(type, rnd, pass == 1);
                MemorySegment w = raw ? randomBlocks(type, rows, cols, rnd) : encoded(type, rows, cols, rnd);
                long rowBytes = type.bytesFor(cols);
                boolean q80 = kernel == NativeKernels.Kernel.Q8_0_16;
                MemorySegment nw = !n.packed() ? w : q80 ? Q8_0NativePacked.pack(w, rows, cols, Arena.ofAuto())
                        : Q4KNativePacked.pack(w, rows, cols, Arena.ofAuto());
                long nRowBytes = !n.packed() ? rowBytes : q80 ? Q8_0NativePacked.rowBytes(cols) : Q4KNativePacked.rowBytes(cols);
                RowKernel j = javaTwin(kernel);
                String where = "%s on %s, %s, seed=%dL, %d x %d".formatted(kernel, isa, raw ? "random blocks" : "encoded", seed, rows, cols);
                Activation[] xs = activations(type, cols, 4, rnd);
                float[] expected = new float[rows], actual = new float[rows];
                j.dotRows(w, rowBytes, xs[0], cols, expected, 0, rows);
                n.dotRows(nw, nRowBytes, xs[0], cols, actual, 0, rows);
                assertThat(actual).as(where + ": dotRows").containsExactly(expected);
                // a range that starts and ends inside groups of the 16-row layout
                float[] part = new float[rows];
                n.dotRows(nw, nRowBytes, xs[0], cols, part, rows / 3, rows - rows / 5);
                for (int r = 0; r < rows; r++) {
                    boolean in = r >= rows / 3 && r < rows - rows / 5;
                    assertThat(part[r]).as(where + ": dotRows of a part, row " + r).isEqualTo(in ? expected[r] : 0f);
                }
                // 6 activations: a group of four through the library's four-at-a-time pass, two one by one
                Activation[] six = activations(type, cols, 6, rnd);
                float[][] batched = new float[6][rows];
                NativeRowKernel.matmul(nw, nRowBytes, cols, n, null, null, six, 6, batched, 0, rows);
                for (int b = 0; b < 6; b++) {
                    float[] one = new float[rows];
                    j.dotRows(w, rowBytes, six[b], cols, one, 0, rows);
                    assertThat(batched[b]).as(where + ": batch of 6, vector " + b).containsExactly(one);
                }
                for (int r = 0; r < rows; r++) {
                    float[][] jo = new float[4][rows], no = new float[4][rows];
                    j.dotVectors4(w, r * rowBytes, xs, 0, cols, jo, r);
                    for (int b = 0; b < 4; b++) {
                        assertThat(n.dot(nw, r * nRowBytes, xs[b], cols)).as(where + ": row %d vector %d", r, b).isEqualTo(jo[b][r]);
                    }
                }
            }
        }
    }

    /**
     * Every matrix of the types below through {@link WeightMatrices} with native and Java kernels, bit for bit; the
     * low-bit types (whose Java kernels are scalar reference loops) with rows a multiple of 8 (llama-server's
     * repacked orders for Q2_K, IQ4_NL, MXFP4) and not, on raw random blocks, IQ4_NL and MXFP4 also with an odd
     * number of blocks per row (vec_dot's lone last block).
     */
    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"Q8_0", "Q4_K", "Q6_K", "Q2_K", "Q3_K", "IQ4_XS", "IQ4_NL", "MXFP4",
            "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S", "IQ1_S", "IQ1_M"})
    void nativeMatricesEqualJavaMatricesForEveryBatchSize(GgmlType type) {
        if (NativeKernels.best().isEmpty()) {
            assertThat(System.getenv("CI")).as(NativeKernels.unavailableReason()).isNotEqualTo("true");
            return;
        }
        int[] extraRows = type == GgmlType.Q4_K ? new int[] {0} : encodes(type) ? new int[] {3} : new int[] {0, 3};
        for (int extra : extraRows) {
            long seed = System.nanoTime();
            Random rnd = new Random(seed);
            // Q4_K: whole groups of the native 16-row layout, or a multiple of 8 only (the Java packed layout)
            int rows = type == GgmlType.Q4_K ? 16 * (1 + rnd.nextInt(3)) + (rnd.nextBoolean() ? 0 : 8)
                    : 8 * (1 + rnd.nextInt(4)) + extra;
            int cols = randomCols(type, rnd, extra != 0);
            MemorySegment w = encodes(type) ? encoded(type, rows, cols, rnd) : randomBlocks(type, rows, cols, rnd);
            matricesAgree(type, rows, cols, w, seed, rnd);
        }
    }

    private static void matricesAgree(GgmlType type, int rows, int cols, MemorySegment w, long seed, Random rnd) {
        // dense (GEMM groups where llama-server has them), routed experts, and RAM-tier copies
        List<Supplier<WeightMatrix>> makers = List.of(() -> WeightMatrices.defaults().of(type, w, rows, cols),
                () -> WeightMatrices.defaults().expert(type, w, rows, cols),
                () -> WeightMatrices.defaults().copiedExpert(type, w, rows, cols, true, Arena.ofAuto()),
                () -> WeightMatrices.defaults().repacked(type, w, rows, cols, Arena.ofAuto()));
        for (int m = 0; m < makers.size(); m++) {
            WeightMatrix nat;
            WeightMatrix java;
            try (var ignored = withKernels("native")) {
                nat = makers.get(m).get();
            }
            try (var ignored = withKernels("java")) {
                java = makers.get(m).get();
            }
            assertThat(nat).as("%s maker %d", type, m).extracting("kernel").isInstanceOf(NativeRowKernel.class);
            for (int r = 0; r < rows; r++) {
                float[] expected = new float[cols], actual = new float[cols];
                java.dequantizeRow(r, expected, 0);
                nat.dequantizeRow(r, actual, 0);
                assertThat(actual).as("%s maker %d, seed=%dL, row %d dequantized", type, m, seed, r).containsExactly(expected);
            }
            for (int count : new int[] {1, 3, 4, 5, 7, 8, 9, 13, 19}) {
                float[][] xs = new float[count][];
                for (int b = 0; b < count; b++) {
                    xs[b] = KernelEquivalenceTest.gaussian(rnd, cols);
                }
                float[][] expected = new float[count][rows], actual = new float[count][rows];
                java.matmul(xs, expected, 0, rows);
                int split = rows / 2 + 1;
                nat.matmul(xs, actual, 0, split);
                nat.matmul(xs, actual, split, rows);
                for (int b = 0; b < count; b++) {
                    assertThat(actual[b]).as("%s maker %d, seed=%dL, %d x %d, batch %d, vector %d", type, m, seed, rows, cols, count, b)
                            .containsExactly(expected[b]);
                }
            }
        }
    }

    /** Whether {@link GgmlCodec#encode} writes the type (the engine does not write the low-bit ones). */
    private static boolean encodes(GgmlType type) {
        return type == GgmlType.Q8_0 || type == GgmlType.Q4_K || type == GgmlType.Q6_K;
    }

    /** 1-3 super-blocks; for the 32-value tables 1-23 blocks, an odd number where {@code odd} (vec_dot's lone last one). */
    private static int randomCols(GgmlType type, Random rnd, boolean odd) {
        // Q8_0 too: its 16-row kernel's lane starts take 64 values a vector, then four at a time
        return type == GgmlType.IQ4_NL || type == GgmlType.MXFP4 || type == GgmlType.Q8_0
                ? 32 * (2 * rnd.nextInt(12) + (odd ? 1 : 2))
                : 256 * (1 + rnd.nextInt(3));
    }

    /** Every instruction set of the native kernels this host runs (none without the library: not in CI). */
    public static List<NativeKernels.Isa> hostIsas() {
        List<NativeKernels.Isa> isas = new ArrayList<>();
        if (NativeKernels.best().isEmpty()) {
            assertThat(System.getenv("CI")).as(NativeKernels.unavailableReason()).isNotEqualTo("true");
            return isas;
        }
        for (NativeKernels.Isa isa : NativeKernels.Isa.values()) {
            if (isa.runsHere()) {
                isas.add(isa);
            }
        }
        return isas;
    }

    private static Activation[] activations(GgmlType type, int cols, int count, Random rnd) {
        Activation[] xs = new Activation[count];
        for (int b = 0; b < count; b++) {
            xs[b] = Activation.allocate(VecDotType.of(type), cols).set(KernelEquivalenceTest.gaussian(rnd, cols));
        }
        return xs;
    }

    private static MemorySegment encoded(GgmlType type, int rows, int cols, Random rnd) {
        return MemorySegment.ofArray(GgmlCodec.encode(type, KernelEquivalenceTest.gaussian(rnd, rows * cols)));
    }

    /** Raw random bytes reach bit patterns an encoder never writes (scale -128, all-ones quants, ...). */
    private static MemorySegment randomBlocks(GgmlType type, int rows, int cols, Random rnd) {
        byte[] bytes = new byte[(int) type.bytesFor((long) rows * cols)];
        rnd.nextBytes(bytes);
        MemorySegment data = MemorySegment.ofArray(bytes);
        for (long blk = 0; blk < bytes.length; blk += type.typeSize()) {
            short scale = Float.floatToFloat16((float) (rnd.nextGaussian() * 0.01));
            switch (type) {
                case Q8_0 -> data.set(I16, blk, scale);
                case Q4_K -> {
                    data.set(I16, blk, scale);
                    data.set(I16, blk + 2, Float.floatToFloat16((float) (rnd.nextGaussian() * 0.01)));
                }
                case Q6_K -> data.set(I16, blk + 208, scale);
                case Q2_K -> {
                    data.set(I16, blk + 80, scale);
                    data.set(I16, blk + 82, Float.floatToFloat16((float) (rnd.nextGaussian() * 0.01)));
                }
                case Q3_K -> data.set(I16, blk + 108, scale);
                case IQ4_XS, IQ4_NL, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S -> data.set(I16, blk, scale);
                case IQ1_M -> { // d's sixteen bits are the top nibbles of the four scale words
                    for (int i = 0; i < 4; i++) {
                        long at = blk + 48 + 2L * i;
                        data.set(I16, at, (short) ((data.get(I16, at) & 0x0FFF) | ((scale >> (4 * i)) & 0xF) << 12));
                    }
                }
                // E8M0: mostly ordinary exponents, now and then 0 or 1 (subnormal scales)
                case MXFP4 -> data.set(ValueLayout.JAVA_BYTE, blk, (byte) (rnd.nextInt(8) == 0 ? rnd.nextInt(2) : 110 + rnd.nextInt(30)));
                default -> throw new IllegalArgumentException(type.name());
            }
        }
        return data;
    }

    /** {@code -Dlazarus.kt.kernels=setting} until closed. */
    public static AutoCloseable0 withKernels(String setting) {
        String previous = System.getProperty(KernelConfig.KERNELS_PROPERTY);
        System.setProperty(KernelConfig.KERNELS_PROPERTY, setting);
        return () -> {
            if (previous == null) {
                System.clearProperty(KernelConfig.KERNELS_PROPERTY);
            } else {
                System.setProperty(KernelConfig.KERNELS_PROPERTY, previous);
            }
        };
    }

    @FunctionalInterface
    public interface AutoCloseable0 extends AutoCloseable {
        @Override
        void close();
    }
    /**
     * A library that does not know this engine's kernels by name and order (older: no {@code lz_kernel_name}; one
     * kernel fewer or more; two in another order) is refused at load, so that the Java kernels run rather than a
     * kernel id the library means otherwise; the library this build made knows them all.
     */
    @Test
    void aLibraryOfAnotherBuildIsRefusedAndTheJavaKernelsRun() {
        List<String> engine = Arrays.stream(NativeKernels.Kernel.values()).map(Enum::name).toList();
        NativeKernels.Library older = NativeKernels.Library.checked(name -> Optional.empty());
        assertThat(older.lookup()).isNull();
        assertThat(older.problem()).contains("no lz_kernel_name", "older than this engine");
        List<String> swapped = new ArrayList<>(engine);
        Collections.swap(swapped, 1, 2);
        List<String> more = new ArrayList<>(engine);
        more.add("Q9_9");
        try (Arena arena = Arena.ofConfined()) {
            assertThat(NativeKernels.Library.checked(exporting(arena, engine.subList(0, engine.size() - 1))).problem())
                    .contains("kernel " + (engine.size() - 1) + " is null, this engine's " + engine.getLast());
            assertThat(NativeKernels.Library.checked(exporting(arena, more)).problem())
                    .contains("kernel " + engine.size() + " is Q9_9, this engine's null");
            NativeKernels.Library reordered = NativeKernels.Library.checked(exporting(arena, swapped));
            assertThat(reordered.lookup()).isNull();
            assertThat(reordered.problem()).contains("kernel 1 is " + engine.get(2) + ", this engine's " + engine.get(1),
                    "built from other sources");
            assertThat(NativeKernels.Library.checked(exporting(arena, engine)).lookup()).isNotNull();
        }
        if (NativeKernels.best().isPresent()) {
            assertThat(NativeKernels.unavailableReason()).as("the library of this build").isEmpty();
        } else {
            assertThat(System.getenv("CI")).as(NativeKernels.unavailableReason()).isNotEqualTo("true");
        }
    }

    /** A lookup whose {@code lz_kernel_name} answers from {@code names} (an upcall standing in for a library's). */
    private static SymbolLookup exporting(Arena arena, List<String> names) {
        List<MemorySegment> strings = names.stream().map(arena::allocateFrom).toList();
        MethodHandle answer = MethodHandles.insertArguments(NAME_OF, 0, strings);
        MemorySegment stub = Linker.nativeLinker().upcallStub(answer,
                FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.JAVA_INT), arena);
        return name -> name.equals("lz_kernel_name") ? Optional.of(stub) : Optional.empty();
    }

    private static final MethodHandle NAME_OF;

    static {
        try {
            NAME_OF = MethodHandles.lookup().findStatic(NativeKernelsTest.class, "nameOf",
                    MethodType.methodType(MemorySegment.class, List.class, int.class));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static MemorySegment nameOf(List<MemorySegment> strings, int id) {
        return id >= 0 && id < strings.size() ? strings.get(id) : MemorySegment.NULL;
    }
}
