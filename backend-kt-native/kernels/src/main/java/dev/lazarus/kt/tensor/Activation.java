package dev.lazarus.kt.tensor;

import dev.lazarus.kt.parallel.IntRangeBody;
import dev.lazarus.kt.parallel.Parallel;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Objects;

/**
 * An activation vector converted to a {@link VecDotType}, reusable for every weight matrix of
 * that vec-dot type and at most {@link #capacity()} columns (for example all experts of a layer).
 * Quantized forms keep their int8 values as floats (exact), which is what the kernels consume.
 * Converting allocates nothing.
 */
public final class Activation {

    private final VecDotType type;
    private final int capacity;
    private int length;
    /** F32/F16/BF16: the (rounded) values; Q8_0/Q8_K: the int8 quants, as floats. */
    public final float[] values;
    /** Q8_0: f16-rounded scale per 32 values; Q8_K: f32 scale per 256. */
    public final float[] scales;
    /** Q8_K: sum of the quants of each 16 values. */
    public final int[] bsums;
    /** Q8_1: d·Σq of each block, rounded to f16 (ggml's {@code s}). */
    public final float[] sums;
    /**
     * The kernels' own copies of the quants ({@link ActivationForm}), indexed by {@link ActivationForm#id}: allocated
     * on the first read of a form, reused across {@link #set}s, rewritten on the first read after each.
     */
    private volatile FormCopy[] forms = new FormCopy[0];
    /** Counts {@link #set}s: a form's copy is current while it was written at this count. */
    private volatile long generation;
    /**
     * Q8_0/Q8_K for {@link NativeKernels}: the quants as int8, the scales and the 16-value sums in native memory,
     * allocated when a native kernel first reads this activation and rewritten by every {@link #set} from then on; its
     * address in a one-element array, as the native kernels take activations.
     */
    private volatile MemorySegment nativeForm;
    private long[] nativeAddress;
    /**
     * Once a native kernel has read this activation: the instruction set whose C conversion
     * ({@link NativeKernels#quantize}, bit-identical to the Java one) writes the quants, the Java arrays and
     * {@link #nativeForm} in one pass from the next {@link #set} on; null while only Java kernels read it. So an
     * activation converts as the kernels of the matrices it meets need, whatever a backend's {@link KernelConfig}.
     */
    private volatile NativeKernels.Isa nativeConversion;
    /** A form's copy and the {@link #generation} it was last written at. */
    private static final class FormCopy {
        final Object copy;
        volatile long writtenAt = -1;

        FormCopy(Object copy) {
            this.copy = copy;
        }
    }

    private Activation(VecDotType type, int capacity) {
        if (capacity % type.blockSize() != 0) {
            throw new IllegalArgumentException("capacity " + capacity + " is not a multiple of the " + type + " block size");
        }
        this.type = type;
        this.capacity = capacity;
        this.values = new float[capacity];
        this.scales = new float[capacity / type.blockSize()];
        this.bsums = new int[type == VecDotType.Q8_K ? capacity / 16 : 0];
        this.sums = new float[type == VecDotType.Q8_1 ? capacity / 32 : 0];
    }

    private boolean quantized() {
        return type == VecDotType.Q8_0 || type == VecDotType.Q8_K;
    }

    /**
     * The address of this activation's native form ({@link #nativeForm}), written now if it had none; from the next
     * {@link #set} on, the native conversion writes it (a native kernel read this activation, so it runs here).
     */
    public long[] nativeAddresses() {
        if (nativeForm == null) {
            synchronized (this) {
                if (nativeForm == null) {
                    MemorySegment s = NativeKernels.allocateActivation(type, capacity);
                    NativeKernels.writeActivation(s, capacity, type, values, scales, bsums, length);
                    nativeAddress = new long[] {s.address()};
                    nativeForm = s;
                    nativeConversion = quantized() ? NativeKernels.best().orElse(null) : null;
                }
            }
        }
        return nativeAddress;
    }

    /**
     * This activation's quants in {@code form}, written now if behind the last {@link #set}. Allocates only on a
     * form's first read: every later call, across sets, reuses its copy.
     *
     * @throws IllegalArgumentException if the form is one of another vec-dot type
     */
    @SuppressWarnings("unchecked")
    public <T> T form(ActivationForm<T> form) {
        FormCopy[] fs = forms;
        int id = form.id;
        if (id < fs.length) {
            FormCopy f = fs[id];
            if (f != null && f.writtenAt == generation) {
                return (T) f.copy;
            }
        }
        return written(form);
    }

    /**
     * Writes {@code form} once after each {@link #set}, on the first kernel thread that reads it (the others wait for
     * it: a set activation is read, never written, by the threads of a product).
     */
    @SuppressWarnings("unchecked")
    private synchronized <T> T written(ActivationForm<T> form) {
        if (form.type() != type) {
            throw new IllegalArgumentException("a " + form.type() + " form of a " + type + " activation");
        }
        FormCopy[] fs = forms;
        FormCopy f = form.id < fs.length ? fs[form.id] : null;
        if (f == null) {
            f = new FormCopy(form.allocate(capacity));
            fs = Arrays.copyOf(fs, Math.max(fs.length, form.id + 1));
            fs[form.id] = f;
            forms = fs;
        }
        long g = generation;
        if (f.writtenAt != g) {
            T copy = (T) f.copy;
            for (int b = 0; b < length / type.blockSize(); b++) {
                form.write(this, b, copy);
            }
            f.writtenAt = g;
        }
        return (T) f.copy;
    }

    public static Activation allocate(VecDotType type, int capacity) {
        return new Activation(type, capacity);
    }

    public VecDotType type() {
        return type;
    }

    public int capacity() {
        return capacity;
    }

    /** Number of values last {@link #set}. */
    public int length() {
        return length;
    }

    /** Converts the first {@code n} values of {@code x}. */
    public Activation set(float[] x, int n) {
        if (n > capacity || n % type.blockSize() != 0) {
            throw new IllegalArgumentException("cannot hold %d values as %s (capacity %d)".formatted(n, type, capacity));
        }
        length = n;
        if (nativeConversion != null) {
            Objects.checkFromToIndex(0, n, x.length);
            NativeKernels.quantize(nativeConversion, type, x, n, nativeForm, values, scales, bsums);
            generation++;
            return this;
        }
        switch (type) {
            case F32 -> System.arraycopy(x, 0, values, 0, n);
            case F16 -> {
                for (int i = 0; i < n; i++) {
                    values[i] = FloatOps.roundF16(x[i]);
                }
            }
            case BF16 -> {
                for (int i = 0; i < n; i++) {
                    values[i] = FloatOps.roundBf16(x[i]);
                }
            }
            case Q8_0 -> {
                for (int b = 0; b < n / 32; b++) {
                    quantizeQ8_0(x, b);
                }
            }
            case Q8_1 -> {
                for (int b = 0; b < n / 32; b++) {
                    sums[b] = FloatOps.roundF16(quantizeQ8_0(x, b) * quantSum(b));
                }
            }
            case Q8_K -> {
                for (int b = 0; b < n / 256; b++) {
                    quantizeQ8_K(x, b);
                }
            }
        }
        generation++;
        MemorySegment s = nativeForm;
        if (s != null) {
            NativeKernels.writeActivation(s, capacity, type, values, scales, bsums, n);
        }
        return this;
    }

    public Activation set(float[] x) {
        return set(x, x.length);
    }

    /**
     * Converts each of {@code xs} (the first {@code n} values) once, for every matrix of that
     * vec-dot type and width to share; many vectors are converted on the pool.
     */
    public static Activation[] convertAll(Parallel parallel, VecDotType type, float[][] xs, int n) {
        Activation[] as = new Activation[xs.length];
        for (int i = 0; i < xs.length; i++) {
            as[i] = new Activation(type, n);
        }
        return convertAll(parallel, xs, n, as);
    }

    /** As {@link #convertAll(Parallel, VecDotType, float[][], int)}, into {@code into} (one each, of room for n); returns it. */
    public static Activation[] convertAll(Parallel parallel, float[][] xs, int n, Activation[] into) {
        IntRangeBody convert = (from, to) -> {
            for (int i = from; i < to; i++) {
                into[i].set(xs[i], n);
            }
        };
        parallel.forTokens(xs.length, convert);
        return into;
    }

    /**
     * As ggml's x86 quantize_row_q8_0 (the path llama-server takes on AVX2/AVX-512): scale amax/127
     * rounded to f16, values x·127/amax rounded to nearest even. Returns the unrounded scale, from
     * which quantize_row_q8_1 derives its sum term.
     */
    private float quantizeQ8_0(float[] x, int b) {
        int o = 32 * b;
        float amax = 0;
        for (int i = 0; i < 32; i++) {
            amax = Math.max(amax, Math.abs(x[o + i]));
        }
        scales[b] = FloatOps.roundF16(amax / 127f);
        float id = amax != 0 ? 127f / amax : 0;
        for (int i = 0; i < 32; i++) {
            values[o + i] = (float) Math.rint(x[o + i] * id);
        }
        return amax / 127f;
    }

    /** Σ of the 32 quants of block {@code b} (exact: |Σ| ≤ 32·127). */
    private int quantSum(int b) {
        int sum = 0;
        for (int i = 32 * b; i < 32 * b + 32; i++) {
            sum += (int) values[i];
        }
        return sum;
    }

    /** As ggml's quantize_row_q8_K ({@link Q8KQuantizer}); the kernels' forms follow on first read ({@link #form}). */
    private void quantizeQ8_K(float[] x, int b) {
        int o = 256 * b;
        if (Q8KQuantizer.quantize(x, o, values, bsums, scales)) {
            return;
        }
        // zero quants: their forms (written from the values on first read) are zeros too
        scales[b] = 0;
        Arrays.fill(values, o, o + 256, 0f);
        Arrays.fill(bsums, 16 * b, 16 * b + 16, 0);
    }

    /**
     * A Q8_K activation with the given int8 quants (any, -128 included, which quantizing never gives) and scales
     * per 256: for tests of the kernels' integer ranges.
     */
    public static Activation ofQ8K(byte[] quants, float[] superBlockScales) {
        Activation a = new Activation(VecDotType.Q8_K, quants.length);
        a.length = quants.length;
        for (int b = 0; b < quants.length / 256; b++) {
            a.scales[b] = superBlockScales[b];
            for (int i = 256 * b; i < 256 * b + 256; i++) {
                a.values[i] = quants[i];
                a.bsums[i / 16] += quants[i];
            }
        }
        a.generation++;
        if (a.nativeForm != null) {
            NativeKernels.writeActivation(a.nativeForm, a.capacity, a.type, a.values, a.scales, a.bsums, a.length);
        }
        return a;
    }
}
