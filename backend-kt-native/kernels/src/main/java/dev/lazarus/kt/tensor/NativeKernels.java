package dev.lazarus.kt.tensor;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.lazarus.kt.gguf.GridQuants;
import dev.lazarus.kt.host.HostCpu;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The engine's native kernels ({@code src/main/c}, built by Maven into {@code native/linux-x86_64/liblazarus-kt.so}
 * in the jar where a C compiler is present): quantized matrix products with ggml's integer dot instructions
 * ({@code vpmaddubsw}, {@code vpdpbusd}), which the Vector API lacks, and the Java kernels' float folds, bit for bit;
 * and the activations' conversion to Q8_0 and Q8_K ({@link #quantize}), bit for bit as {@link Activation}'s Java one.
 * One translation unit per instruction set, picked by the CPU's flags ({@link Isa#forHost}); called through FFM
 * with {@link Linker.Option#critical} so that heap arrays pass without copies. Whether a backend's matrices take them is
 * its {@link KernelConfig}.
 */
public final class NativeKernels {

    private static final System.Logger LOG = System.getLogger(NativeKernels.class.getName());
    private static final String RESOURCE = "/native/linux-x86_64/liblazarus-kt.so";

    /** The instruction sets the library has a translation unit for, best first. */
    public enum Isa {
        AVX512_VNNI("avx512-vnni", "lz_avx512_vnni_rows", "lz_avx512_vnni_quantize",
                Set.of("avx512f", "avx512bw", "avx512vl", "avx512_vnni", "f16c", "fma")),
        AVX2("avx2", "lz_avx2_rows", "lz_avx2_quantize", Set.of("avx2", "fma", "f16c"));

        public final String label;
        final String symbol;
        /** The activation conversion ({@code lz_quant.h}). */
        final String quantizeSymbol;
        final Set<String> flags;

        Isa(String label, String symbol, String quantizeSymbol, Set<String> flags) {
            this.label = label;
            this.symbol = symbol;
            this.quantizeSymbol = quantizeSymbol;
            this.flags = flags;
        }

        /** Whether this host's CPU runs it. */
        public boolean runsHere() {
            return HostCpu.flags().containsAll(flags);
        }

        /** The best the host runs, if any. */
        static Optional<Isa> forHost() {
            for (Isa isa : values()) {
                if (isa.runsHere()) {
                    return Optional.of(isa);
                }
            }
            return Optional.empty();
        }
    }

    /** The kernels of the library, by the ids of {@code lz_driver.h}: a weight layout and a float fold. */
    public enum Kernel {
        /** ggml's vec_dot_q8_0_q8_0 ({@code Q8_0Kernel}). */
        Q8_0(VecDotType.Q8_0),
        /** llama-server's repacked Q4_K GEMV ({@code GgmlKQuantKernels.q4kRepacked}). */
        Q4K_GEMV(VecDotType.Q8_K),
        /** Its repacked GEMM ({@code GgmlKQuantKernels.q4kRepackedGemm}). */
        Q4K_GEMM(VecDotType.Q8_K),
        /** The tiled matmul on Q4_K ({@code Q4KQ5KKernel#Q4_K_TILED}). */
        Q4K_TILED(VecDotType.Q8_K),
        /** vec_dot_q6_K_q8_K ({@code GgmlKQuantKernels.q6k}). */
        Q6K(VecDotType.Q8_K),
        /** The tiled matmul on Q6_K ({@code Q6KInt16Kernel#TILED}). */
        Q6K_TILED(VecDotType.Q8_K),
        // the low-bit types (lz_lowbit.h): SubBlockKQuantKernel's orders on Q2_K, Q3_K, IQ4_XS
        Q2K(VecDotType.Q8_K), Q2K_GEMV(VecDotType.Q8_K), Q2K_GEMM(VecDotType.Q8_K), Q2K_TILED(VecDotType.Q8_K),
        Q3K(VecDotType.Q8_K), Q3K_TILED(VecDotType.Q8_K), IQ4XS(VecDotType.Q8_K), IQ4XS_TILED(VecDotType.Q8_K),
        // and TableBlockKernel's on IQ4_NL, MXFP4
        IQ4NL(VecDotType.Q8_0), IQ4NL_REPACKED(VecDotType.Q8_0), MXFP4(VecDotType.Q8_0), MXFP4_REPACKED(VecDotType.Q8_0),
        /** {@link #Q4K_GEMV}'s order on the RAM tier's 16-row layout ({@code Q4KNativePacked}). */
        Q4K16_GEMV(VecDotType.Q8_K),
        /** {@link #Q4K_GEMM}'s order on it. */
        Q4K16_GEMM(VecDotType.Q8_K),
        // the grid I-quants (lz_grid.h): SubBlockKQuantKernel's VEC_DOT and TILED orders, in lz_grid.h's type order
        IQ2XXS(VecDotType.Q8_K), IQ2XXS_TILED(VecDotType.Q8_K), IQ2XS(VecDotType.Q8_K), IQ2XS_TILED(VecDotType.Q8_K),
        IQ2S(VecDotType.Q8_K), IQ2S_TILED(VecDotType.Q8_K), IQ3XXS(VecDotType.Q8_K), IQ3XXS_TILED(VecDotType.Q8_K),
        IQ3S(VecDotType.Q8_K), IQ3S_TILED(VecDotType.Q8_K), IQ1S(VecDotType.Q8_K), IQ1S_TILED(VecDotType.Q8_K),
        IQ1M(VecDotType.Q8_K), IQ1M_TILED(VecDotType.Q8_K),
        /** {@link #Q8_0}'s order on the 16-row layout of Q8_0 copied at load ({@code Q8_0NativePacked}). */
        Q8_0_16(VecDotType.Q8_0);

        public final VecDotType activation;

        Kernel(VecDotType activation) {
            this.activation = activation;
        }
    }

    /** The library as loaded (or why not), once per JVM. */
    public record Library(SymbolLookup lookup, String problem) {
        static final Library LOADED = load();

        /**
         * {@code lookup} where its library knows exactly this engine's kernels, by name and in {@link Kernel}'s order
         * ({@code lz_kernel_name}), else unavailable: a library built from other sources (a stale build output, an
         * overlay of newer classes on an older payload) would run another kernel, or none, for an id, and a mere
         * lookup would not notice.
         */
        public static Library checked(SymbolLookup lookup) {
            Kernel[] engine = Kernel.values();
            Optional<MemorySegment> names = lookup.find("lz_kernel_name");
            if (names.isEmpty()) {
                return stale("liblazarus-kt.so has no lz_kernel_name: it is older than this engine");
            }
            MethodHandle name = Linker.nativeLinker().downcallHandle(names.get(), FunctionDescriptor.of(ADDRESS, JAVA_INT));
            try {
                for (int id = 0; id <= engine.length; id++) {
                    MemorySegment answer = (MemorySegment) name.invokeExact(id);
                    String theirs = answer.equals(MemorySegment.NULL) ? null
                            : answer.reinterpret(Long.MAX_VALUE).getString(0);
                    String ours = id < engine.length ? engine[id].name() : null;
                    if (!Objects.equals(theirs, ours)) {
                        return stale("liblazarus-kt.so's kernel " + id + " is " + theirs + ", this engine's " + ours
                                + ": it was built from other sources than these classes");
                    }
                }
            } catch (Throwable e) {
                return stale("liblazarus-kt.so's lz_kernel_name failed: " + e);
            }
            return new Library(lookup, "");
        }

        private static Library stale(String problem) {
            LOG.log(System.Logger.Level.WARNING, "kt-native native kernels refused, the Java kernels run: " + problem
                    + " (rebuild the library with the classes: ./mvnw -pl backend-kt-native/kernels compile)");
            return new Library(null, problem);
        }
    }

    private NativeKernels() {
    }

    /** The instruction set native kernels run in here, if the library loaded and the CPU runs one of its units. */
    public static Optional<Isa> best() {
        return Library.LOADED.lookup == null ? Optional.empty() : Isa.forHost();
    }

    /** Why {@link #best} is empty (for logs and errors), or "" where it is not. */
    public static String unavailableReason() {
        if (Library.LOADED.lookup == null) {
            return Library.LOADED.problem;
        }
        return Isa.forHost().isPresent() ? "" : "the CPU has neither AVX2+FMA+F16C nor AVX-512 VNNI";
    }

    /** {@code native-avx512-vnni}: the label of the native kernels on {@code isa}. */
    public static String describe(Isa isa) {
        return "native-" + isa.label;
    }

    /** The downcall of the library's row kernels on {@code isa} ({@code lz_driver.h}), bound on first use. */
    public static MethodHandle rows(Isa isa) {
        return Handles.HANDLES[isa.ordinal()];
    }

    /**
     * Activation's conversion of {@code x[0, n)} to {@code type} (Q8_0 or Q8_K) on {@code isa}, bit for bit as the
     * Java one ({@code lz_quant.h}): the quants as floats into {@code values}, the scales, the 16-value sums (Q8_K),
     * and all three into the native form {@code s} ({@link #allocateActivation}) in the same pass.
     */
    static void quantize(Isa isa, VecDotType type, float[] x, int n, MemorySegment s, float[] values, float[] scales,
                         int[] bsums) {
        try {
            Handles.QUANTIZE[isa.ordinal()].invokeExact(type == VecDotType.Q8_0 ? 0 : 1, MemorySegment.ofArray(x), n,
                    s.address(), MemorySegment.ofArray(values), MemorySegment.ofArray(scales), MemorySegment.ofArray(bsums));
        } catch (Throwable e) {
            throw new IllegalStateException("native activation conversion failed", e);
        }
    }

    /**
     * {@code y[i] = expf(x[i])} for i in [0, n) with the C library's {@code expf} ({@code lz_libm.c}; on AVX-512 hosts
     * its operations in vector lanes, {@code lz_flash_avx512.c}): one downcall for a whole array, the same bits as a
     * per-value call. False (nothing written) where the library is not loaded.
     */
    public static boolean expf(float[] x, float[] y, int n) {
        MethodHandle expf = Expf.HANDLE;
        if (expf == null) {
            return false;
        }
        try {
            expf.invokeExact(MemorySegment.ofArray(x), MemorySegment.ofArray(y), n);
        } catch (Throwable e) {
            throw new IllegalStateException("native expf failed", e);
        }
        return true;
    }

    /**
     * Flash attention's F16 value accumulation over a row chunk ({@code lz_flash_avx512.c}), bit for bit as the Java
     * {@code FlashAttentionKernel.madF16}: for each {@code k < count} the accumulator {@code acc[0, n)} rescaled by
     * {@code rescale[k]} where that is not 1, then {@code v[kept[k]·vStride + vOff ..]} added with weight
     * {@code weight[k]}, every step rounded to F16. False (nothing done) without the library or AVX-512 here.
     */
    public static boolean flashMadF16(float[] acc, short[] v, int vOff, int vStride, int n, int[] kept, float[] rescale,
                                      float[] weight, int count) {
        MethodHandle mad = FlashMad.HANDLE;
        if (mad == null) {
            return false;
        }
        try {
            mad.invokeExact(MemorySegment.ofArray(acc), MemorySegment.ofArray(v), vOff, vStride, n,
                    MemorySegment.ofArray(kept), MemorySegment.ofArray(rescale), MemorySegment.ofArray(weight), count);
        } catch (Throwable e) {
            throw new IllegalStateException("native flash-attention value accumulation failed", e);
        }
        return true;
    }

    /**
     * {@code ggml_vec_dot_f16} of {@code q[0, dim)} (F16-rounded floats) with the F16 keys of positions [from, to)
     * ({@code keys[t·kStride + kOff ..]}) into {@code scores[t]} ({@code lz_flash_avx512.c}), bit for bit as the Java
     * {@code AttentionKernel.keyDots}; {@code dim} a multiple of 64. False (nothing done) without the library or
     * AVX-512 here.
     */
    public static boolean f16KeyDots(float[] q, int dim, short[] keys, int kOff, int kStride, int from, int to,
                                     float[] scores) {
        MethodHandle dots = F16KeyDots.HANDLE;
        if (dots == null) {
            return false;
        }
        try {
            dots.invokeExact(MemorySegment.ofArray(q), dim, MemorySegment.ofArray(keys), kOff, kStride, from, to,
                    MemorySegment.ofArray(scores));
        } catch (Throwable e) {
            throw new IllegalStateException("native F16 key dots failed", e);
        }
        return true;
    }

    /**
     * {@code out[outOff + d]} = {@code ggml_vec_dot_f16} of {@code p[0, positions)} (F16-rounded floats) with column d
     * of the F16 values ({@code values[t·vStride + vOff + d]}) for d below {@code vDim}, a multiple of 16
     * ({@code lz_flash_avx512.c}), bit for bit as the Java {@code AttentionKernel.valueDots}. False (nothing done)
     * without the library or AVX-512 here.
     */
    public static boolean f16ValueDots(float[] p, int positions, short[] values, int vOff, int vStride, int vDim,
                                       float[] out, int outOff) {
        MethodHandle dots = F16ValueDots.HANDLE;
        if (dots == null) {
            return false;
        }
        try {
            dots.invokeExact(MemorySegment.ofArray(p), positions, MemorySegment.ofArray(values), vOff, vStride, vDim,
                    MemorySegment.ofArray(out).asSlice(4L * outOff));
        } catch (Throwable e) {
            throw new IllegalStateException("native F16 value dots failed", e);
        }
        return true;
    }

    /** lz_avx512_f16_value_dots's downcall, or null without the library or AVX-512 (avx512f, f16c, fma). */
    private static final class F16ValueDots {
        static final MethodHandle HANDLE = Library.LOADED.lookup == null
                || !HostCpu.flags().containsAll(Set.of("avx512f", "f16c", "fma")) ? null
                : Library.LOADED.lookup.find("lz_avx512_f16_value_dots").map(symbol -> Linker.nativeLinker()
                        .downcallHandle(symbol, FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT, ADDRESS, JAVA_INT,
                                JAVA_INT, JAVA_INT, ADDRESS), Linker.Option.critical(true))).orElse(null);
    }

    /** lz_avx512_f16_key_dots's downcall, or null without the library or AVX-512 (avx512f, f16c, fma). */
    private static final class F16KeyDots {
        static final MethodHandle HANDLE = Library.LOADED.lookup == null
                || !HostCpu.flags().containsAll(Set.of("avx512f", "f16c", "fma")) ? null
                : Library.LOADED.lookup.find("lz_avx512_f16_key_dots").map(symbol -> Linker.nativeLinker()
                        .downcallHandle(symbol, FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT, ADDRESS, JAVA_INT,
                                JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS), Linker.Option.critical(true))).orElse(null);
    }

    /** lz_avx512_flash_mad_f16h's downcall, or null without the library or AVX-512 (avx512f/bw/vl, f16c, fma). */
    private static final class FlashMad {
        static final MethodHandle HANDLE = Library.LOADED.lookup == null
                || !HostCpu.flags().containsAll(Set.of("avx512f", "avx512bw", "avx512vl", "f16c", "fma")) ? null
                : Library.LOADED.lookup.find("lz_avx512_flash_mad_f16h").map(symbol -> Linker.nativeLinker().downcallHandle(
                        symbol, FunctionDescriptor.ofVoid(ADDRESS, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS,
                                ADDRESS, JAVA_INT), Linker.Option.critical(true))).orElse(null);
    }

    /**
     * lz_expf's downcall (on AVX-512 hosts lz_avx512_expf, glibc's expf in vector lanes, the same bits), or null without
     * the library (or in one older than it).
     */
    private static final class Expf {
        static final MethodHandle HANDLE = Library.LOADED.lookup == null ? null
                : Library.LOADED.lookup.find(HostCpu.flags().containsAll(Set.of("avx512f", "avx512vl")) ? "lz_avx512_expf"
                        : "lz_expf").map(symbol -> Linker.nativeLinker().downcallHandle(symbol,
                        FunctionDescriptor.ofVoid(ADDRESS, ADDRESS, JAVA_INT), Linker.Option.critical(true))).orElse(null);
    }

    /** The downcall per instruction set, bound on first use. */
    private static final class Handles {
        static final MethodHandle[] HANDLES = bind();
        static final MethodHandle[] QUANTIZE = bindQuantize();

        private static MethodHandle[] bindQuantize() {
            FunctionDescriptor quantize = FunctionDescriptor.ofVoid(JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG, ADDRESS,
                    ADDRESS, ADDRESS);
            MethodHandle[] handles = new MethodHandle[Isa.values().length];
            for (Isa isa : Isa.values()) {
                handles[isa.ordinal()] = Linker.nativeLinker().downcallHandle(
                        Library.LOADED.lookup.findOrThrow(isa.quantizeSymbol), quantize, Linker.Option.critical(true));
            }
            return handles;
        }

        private static MethodHandle[] bind() {
            SymbolLookup lookup = Library.LOADED.lookup;
            FunctionDescriptor rows = FunctionDescriptor.ofVoid(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT,
                    ADDRESS, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT);
            // the grid I-quants' codebooks, once, before any kernel can run
            try {
                Linker.nativeLinker().downcallHandle(lookup.findOrThrow("lz_set_grid_tables"), FunctionDescriptor.ofVoid(ADDRESS))
                        .invokeExact(GridQuants.nativeTables());
            } catch (Throwable e) {
                throw new IllegalStateException("lz_set_grid_tables failed", e);
            }
            MethodHandle[] handles = new MethodHandle[Isa.values().length];
            for (Isa isa : Isa.values()) {
                handles[isa.ordinal()] = Linker.nativeLinker().downcallHandle(lookup.findOrThrow(isa.symbol), rows,
                        Linker.Option.critical(true));
            }
            return handles;
        }
    }

    private static Library load() {
        if (!System.getProperty("os.name", "").startsWith("Linux") || !System.getProperty("os.arch", "").equals("amd64")) {
            return unavailable("no native kernels for " + System.getProperty("os.name") + " " + System.getProperty("os.arch"));
        }
        try (InputStream in = NativeKernels.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                return unavailable("liblazarus-kt.so is not in this build (no C compiler when it was built)");
            }
            Path file = Files.createTempFile("liblazarus-kt", ".so");
            file.toFile().deleteOnExit();
            Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
            Library loaded = Library.checked(SymbolLookup.libraryLookup(file, Arena.global()));
            if (loaded.lookup == null) {
                return loaded;
            }
            LOG.log(System.Logger.Level.INFO, "kt-native native kernels loaded (" + RESOURCE + "); host runs "
                    + Isa.forHost().map(i -> i.label).orElse("none of its instruction sets"));
            return loaded;
        } catch (IOException | RuntimeException | UnsatisfiedLinkError e) {
            return unavailable("liblazarus-kt.so did not load: " + e);
        }
    }

    private static Library unavailable(String problem) {
        LOG.log(System.Logger.Level.INFO, "kt-native native kernels unavailable, the Java kernels run: " + problem);
        return new Library(null, problem);
    }

    /** An activation's quants, scales and 16-value sums in the layout of {@code lz_driver.h}'s {@code lz_act}. */
    static MemorySegment allocateActivation(VecDotType type, int capacity) {
        MemorySegment s = Arena.ofAuto().allocate(64L + capacity + 4L * (capacity / type.blockSize()) + 4L * (capacity / 16), 64);
        s.set(JAVA_INT, 0, capacity);
        return s;
    }

    /** Writes the first {@code n} quants, their scales and (Q8_K) 16-value sums into {@code s}. */
    static void writeActivation(MemorySegment s, int capacity, VecDotType type, float[] values, float[] scales,
                                int[] bsums, int n) {
        for (int i = 0; i < n; i++) {
            s.set(JAVA_BYTE, 64L + i, (byte) values[i]);
        }
        long at = 64L + capacity;
        MemorySegment.copy(scales, 0, s, JAVA_FLOAT, at, n / type.blockSize());
        if (type == VecDotType.Q8_K) {
            MemorySegment.copy(bsums, 0, s, JAVA_INT, at + 4L * (capacity / type.blockSize()), n / 16);
        }
    }
}
