package dev.lazarus.kt.gpu;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/** The device and pinned host memory one GPU path allocates, freed together when it closes or fails to build. */
final class DeviceAllocations {

    private final CudaDriver cu;
    private final List<Long> device = new ArrayList<>();
    private final List<MemorySegment> pinned = new ArrayList<>();

    DeviceAllocations(CudaDriver cu) {
        this.cu = cu;
    }

    long device(long bytes) {
        long p = cu.malloc(bytes);
        device.add(p);
        return p;
    }

    MemorySegment host(long bytes) {
        MemorySegment m = cu.mallocHost(bytes);
        pinned.add(m);
        return m;
    }

    /** Frees one device buffer before the rest (the caller has synchronised the stream). */
    void free(long p) {
        cu.free(p);
        device.remove(Long.valueOf(p));
    }

    void freeAll() {
        for (long p : device) {
            cu.free(p);
        }
        device.clear();
        for (MemorySegment m : pinned) {
            cu.freeHost(m);
        }
        pinned.clear();
    }
}
