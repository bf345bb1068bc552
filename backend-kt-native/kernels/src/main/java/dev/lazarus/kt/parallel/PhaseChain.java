package dev.lazarus.kt.parallel;

import java.util.List;

/**
 * Phased bodies run one after the other as the phases of ONE {@link Parallel#forPhases} call: a decode step's
 * blocks and its output head, so the pool's threads go from one block to the next without returning to the caller,
 * and the serial work between two parts (a residual add, a norm) runs on the calling thread between them.
 */
public final class PhaseChain implements PhasedBody {

    /** A body of {@code phases} phases; every one of them is opened, in order, also where it has no indices. */
    public record Part(int phases, PhasedBody body) {}

    private final PhasedBody[] bodies;
    /** For each phase of the chain: its part, and its phase within the part. */
    private final int[] partOf, localOf;

    public PhaseChain(List<Part> parts) {
        int total = parts.stream().mapToInt(Part::phases).sum();
        this.bodies = new PhasedBody[parts.size()];
        this.partOf = new int[total];
        this.localOf = new int[total];
        int at = 0;
        for (int p = 0; p < parts.size(); p++) {
            bodies[p] = parts.get(p).body();
            for (int local = 0; local < parts.get(p).phases(); local++, at++) {
                partOf[at] = p;
                localOf[at] = local;
            }
        }
    }

    /** All parts' phases. */
    public int phases() {
        return partOf.length;
    }

    /** Runs every part's phases in one call on {@code parallel}. */
    public void run(Parallel parallel) {
        parallel.forPhases(phases(), this);
    }

    @Override
    public int open(int phase) {
        return bodies[partOf[phase]].open(localOf[phase]);
    }

    @Override
    public void run(int phase, int from, int to) {
        bodies[partOf[phase]].run(localOf[phase], from, to);
    }

    @Override
    public int grain(int phase) {
        return bodies[partOf[phase]].grain(localOf[phase]);
    }
}
