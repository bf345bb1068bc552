package dev.lazarus.kt.gpu;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Reusable {@code kernelParams} for the launches of one thread: {@code cuLaunchKernel} copies the argument
 * values when it is called, so one small native buffer serves every launch (the per-token path launches
 * dozens of kernels; {@link KernelArgs} allocates per launch, which suits the occasional one).
 */
final class LaunchArgs {

    private static final int SLOTS = 24;

    private final MemorySegment values;
    private final MemorySegment pointers;
    private int count;

    LaunchArgs(Arena arena) {
        values = arena.allocate(8L * SLOTS, 8);
        pointers = arena.allocate(ADDRESS, SLOTS);
        for (int i = 0; i < SLOTS; i++) {
            pointers.setAtIndex(ADDRESS, i, values.asSlice(8L * i, 8));
        }
    }

    /** Starts the arguments of the next launch. */
    LaunchArgs begin() {
        count = 0;
        return this;
    }

    LaunchArgs ptr(long devicePointer) {
        return i64(devicePointer);
    }

    LaunchArgs i64(long v) {
        values.set(JAVA_LONG, 8L * next(), v);
        return this;
    }

    LaunchArgs i32(int v) {
        values.set(JAVA_INT, 8L * next(), v);
        return this;
    }

    LaunchArgs f32(float v) {
        values.set(JAVA_FLOAT, 8L * next(), v);
        return this;
    }

    private int next() {
        if (count == SLOTS) {
            throw new IllegalStateException("more than " + SLOTS + " kernel arguments");
        }
        return count++;
    }

    MemorySegment params() {
        return pointers;
    }
}
