package dev.lazarus.kt.placement;

import dev.lazarus.kt.model.ExpertWeights;

/**
 * An accelerator that holds experts in its own memory and computes them there (the CUDA tier in
 * {@code dev.lazarus.kt.gpu}; a CPU stand-in in tests). Uploads and frees come from the placement
 * thread, {@link #submit} from the forward thread; implementations make that safe.
 */
public interface DeviceTier extends AutoCloseable {

    /** A short description for logs and the admin view ("NVIDIA H100 80GB HBM3 (cuda:0)"). */
    String describe();

    /** Whether this device has kernels for the expert's weight types. */
    boolean supports(ExpertWeights weights);

    /** Copies the expert's weights into device memory; blocks until they are there. */
    Resident upload(ExpertWeights weights);

    /**
     * Starts computing {@code experts[j]} on {@code inputs[j]} and returns at once, so the caller can
     * compute its CPU experts meanwhile; {@link Pending#await} returns {@code [j][token][dim]}.
     */
    Pending submit(Resident[] experts, float[][][] inputs);

    @Override
    void close();

    /** An expert in device memory. */
    interface Resident {
        long bytes();

        /** Frees the device memory; called once, after the last computation that used it finished. */
        void free();
    }

    /** Work in flight. */
    interface Pending {
        float[][][] await();
    }
}
