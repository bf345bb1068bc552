package dev.lazarus.kt.model;

import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.VecDotType;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

/**
 * Working buffers that a call site reuses from one call to the next: float vectors by length and activations by
 * vec-dot type and width, lent to ONE call and taken back when it ends. A decode step allocated about 800 KB of
 * such buffers per token (activations, projections' outputs, the experts' hidden vectors), all garbage a moment
 * later. Only what a call uses internally comes from here, never what it returns.
 *
 * <p>A site keeps its idle scratch in a {@link Slot}: a call takes it and gives it back at its end, and a call that
 * finds the slot empty (another thread's call holds it) works with a fresh one, so two calls never share a buffer.
 * What a slot keeps is what the last call borrowed, and only when that was at most {@link #KEPT_BYTES} (a decode
 * step, not a prompt's chunk): a model's blocks do not hold prompt-sized buffers for good. Borrowing happens on the
 * thread that runs the call's serial parts, never from two threads at once.
 */
final class Scratch {

    /** A call that borrowed more than this (about; a prompt, not a decode step) drops its scratch at the end. */
    static final long KEPT_BYTES = 1 << 20;
    /**
     * What a {@link Slot#retaining} slot keeps at most: a 512-token prompt of the bench model borrows about 30 MB for its
     * experts; a prompt whose buffers exceed this drops them at its end, as every prompt did before.
     */
    static final long RETAINED_BYTES = 128L << 20;
    /** Bytes counted per value of an activation: the values, and the int16 copies of the K-quant forms. */
    private static final int ACTIVATION_BYTES_PER_VALUE = 12;

    /** The idle scratch of one call site. */
    static final class Slot {
        private final AtomicReference<Scratch> idle = new AtomicReference<>();
        private final long keptBytes;
        private final boolean retains;

        /** A slot that keeps what the last call borrowed, if at most {@link #KEPT_BYTES}. */
        Slot() {
            this(KEPT_BYTES, false);
        }

        private Slot(long keptBytes, boolean retains) {
            this.keptBytes = keptBytes;
            this.retains = retains;
        }

        /**
         * A slot that keeps every buffer its calls made, as long as they come to at most {@code bytes} together: for
         * a site that one call at a time uses for every block of every model (a prompt's buffers, tens of MB, were
         * made anew at each block: at 16 threads a third of a 512-token prefill was spent on one thread allocating
         * them), where decode steps between two prompts would otherwise drop the prompt-sized ones.
         */
        static Slot retaining(long bytes) {
            return new Slot(bytes, true);
        }

        /** This site's scratch, or a fresh one while another call holds it. */
        Scratch take() {
            Scratch s = idle.getAndSet(null);
            return s != null ? s : new Scratch();
        }

        /** Takes back everything {@code s} lent, and keeps it for the next call unless it grew too large. */
        void give(Scratch s) {
            if ((retains ? s.madeBytes : s.lentBytes) <= keptBytes) {
                s.recycle(retains);
                idle.set(s);
            }
        }
    }

    /** Idle and lent buffers of one size (a float length, or an activation's type and width). */
    private static final class Bin<T> {
        final long key;
        final ArrayDeque<T> idle = new ArrayDeque<>();
        final List<T> lent = new ArrayList<>();

        Bin(long key) {
            this.key = key;
        }

        T take(Function<Long, T> make) {
            T t = idle.isEmpty() ? make.apply(key) : idle.pop();
            lent.add(t);
            return t;
        }

        /** Keeps what the last call borrowed, and only that (or, {@code retains}, what earlier calls left idle too). */
        void recycle(boolean retains) {
            if (!retains) {
                idle.clear();
            }
            idle.addAll(lent);
            lent.clear();
        }
    }

    private final List<Bin<float[]>> floats = new ArrayList<>();
    private final List<Bin<Activation>> activations = new ArrayList<>();
    private long lentBytes;
    /** Bytes of every buffer this scratch made (what a {@link Slot#retaining} slot keeps). */
    private long madeBytes;

    /** A vector of {@code n} floats; its contents are left over from an earlier call: the borrower overwrites them all. */
    float[] floats(int n) {
        lentBytes += 4L * n;
        Bin<float[]> b = bin(floats, n);
        if (b.idle.isEmpty()) {
            madeBytes += 4L * n;
        }
        return b.take(length -> new float[(int) (long) length]);
    }

    /** {@code count} vectors of {@code n} floats (see {@link #floats(int)}). */
    float[][] floats(int count, int n) {
        float[][] v = new float[count][];
        for (int i = 0; i < count; i++) {
            v[i] = floats(n);
        }
        return v;
    }

    /** An activation of {@code type} holding {@code n} values (what it held before is overwritten by its next set). */
    Activation activation(VecDotType type, int n) {
        lentBytes += (long) ACTIVATION_BYTES_PER_VALUE * n;
        Bin<Activation> b = bin(activations, ((long) type.ordinal() << 32) | n);
        if (b.idle.isEmpty()) {
            madeBytes += (long) ACTIVATION_BYTES_PER_VALUE * n;
        }
        return b.take(key -> Activation.allocate(VecDotType.values()[(int) (key >>> 32)], (int) (long) key));
    }

    /** Each of {@code xs} (its first {@code n} values) converted to {@code type} in activations of this scratch. */
    Activation[] convert(Parallel parallel, VecDotType type, float[][] xs, int n) {
        Activation[] into = new Activation[xs.length];
        for (int i = 0; i < xs.length; i++) {
            into[i] = activation(type, n);
        }
        return Activation.convertAll(parallel, xs, n, into);
    }

    private void recycle(boolean retains) {
        floats.forEach(b -> b.recycle(retains));
        activations.forEach(b -> b.recycle(retains));
        lentBytes = 0;
    }

    private static <T> Bin<T> bin(List<Bin<T>> bins, long key) {
        for (Bin<T> b : bins) {
            if (b.key == key) {
                return b;
            }
        }
        Bin<T> b = new Bin<>(key);
        bins.add(b);
        return b;
    }
}
