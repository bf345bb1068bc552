package dev.lazarus.kt.placement;

import java.util.Locale;

/** Where a routed expert's weights live, fastest first. */
public enum Tier {
    /** Device memory of a GPU, computed there. */
    GPU,
    /** A copy in process memory, laid out for the CPU kernels once at placement time. */
    RAM,
    /** Read in place from the memory-mapped GGUF (the page cache decides what stays resident). */
    MMAP;

    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }
}
