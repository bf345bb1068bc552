package dev.lazarus.kt.gpu;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/** The {@code void** kernelParams} of a {@code cuLaunchKernel}: one pointer to each argument's value. */
final class KernelArgs {

    private final Arena arena;
    private final List<MemorySegment> values = new ArrayList<>();

    KernelArgs(Arena arena) {
        this.arena = arena;
    }

    KernelArgs pointer(long devicePointer) {
        return i64(devicePointer);
    }

    KernelArgs i64(long v) {
        values.add(arena.allocateFrom(JAVA_LONG, v));
        return this;
    }

    KernelArgs i32(int v) {
        values.add(arena.allocateFrom(JAVA_INT, v));
        return this;
    }

    MemorySegment segment() {
        MemorySegment array = arena.allocate(ADDRESS, values.size());
        for (int i = 0; i < values.size(); i++) {
            array.setAtIndex(ADDRESS, i, values.get(i));
        }
        return array;
    }
}
