package dev.lazarus.kt.parallel;

/**
 * Work done in phases by one {@link Parallel#forPhases} call: every index of a phase is done before any of the
 * next, but the threads stay in the call between phases instead of returning to the caller and being handed
 * the next pass.
 */
public interface PhasedBody {

    /**
     * Runs once, on one thread, before phase {@code phase}: after every index of the previous phase is done
     * (serial work between two phases belongs here). Returns how many indices the phase has (0: none).
     */
    int open(int phase);

    /** Phase {@code phase}'s work on the index range {@code [from, to)}. */
    void run(int phase, int from, int to);

    /**
     * Indices per chunk boundary of phase {@code phase}, asked right after its {@link #open} (a block of rows kept
     * together, as {@link RowSplitter#grain()}); 1 unless overridden.
     */
    default int grain(int phase) {
        return 1;
    }
}
