package dev.lazarus.kt.tensor;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A kernel's own copy of an activation's quants, in the order that kernel reads them (for example ggml's Q4_K
 * bytes read as shorts). The quant package whose kernels read a form defines it, as a constant; {@link Activation}
 * keeps one copy per form it meets, allocated on first read and rewritten on the first read after each
 * {@link Activation#set}, so it holds no kernel's order itself and an activation that no kernel reads in some form
 * never pays for it.
 *
 * @param <T> the copy's array type
 */
public abstract class ActivationForm<T> {

    private static final AtomicInteger IDS = new AtomicInteger();

    /** Index of this form's slot in every activation: forms are few constants, so the slots stay a short array. */
    final int id = IDS.getAndIncrement();
    private final VecDotType type;

    protected ActivationForm(VecDotType type) {
        this.type = type;
    }

    /** The vec-dot type whose activations take this form. */
    public final VecDotType type() {
        return type;
    }

    /** A copy of room for {@code capacity} values. */
    protected abstract T allocate(int capacity);

    /** Writes block {@code b} (of the type's block size) of {@code x}'s quants ({@link Activation#values}) into {@code into}. */
    protected abstract void write(Activation x, int b, T into);
}
