package dev.lazarus.kt.gpu;

/**
 * One attention form of the GPU layer path: its weights, scratch buffers and launches for every block. The
 * host {@link dev.lazarus.kt.model.KvCache} layout it writes back must be the CPU attention's, so either path
 * can continue a sequence.
 */
interface DeviceAttention {

    /** Floats of device memory for scratch, freed with the layer path. */
    @FunctionalInterface
    interface Scratch {
        long allocate(long floats);
    }

    /** Key floats per position and block, as the host cache holds them. */
    int keyWidth();

    /** Value floats per position and block (0: the values are a view of the keys). */
    int valueWidth();

    /** Query heads (rows of attention scores). */
    int heads();

    /**
     * Block {@code b}'s attention of the normed token ({@code xn} f32, {@code xq} its Q8_0 form) at the
     * position held by the device int at {@code pos} (read by the kernels, so a captured graph serves every token), added to the residual {@code x}; the position's keys and values go into the device
     * cache {@code copy} and, F16-rounded, to {@code kvOut} ({@code keyWidth + valueWidth} floats).
     * {@code rope}: this position's cos/sin table; {@code scores}: {@code heads × scoreStride} floats.
     */
    void forward(int b, long xn, long xq, long x, DeviceKvCaches.Copy copy, long kvOut, long rope, long pos,
                 long scores, int scoreStride);
}
