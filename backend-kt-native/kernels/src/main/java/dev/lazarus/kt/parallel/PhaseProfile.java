package dev.lazarus.kt.parallel;

import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Where the time of the pool's {@link Parallel#forPhases} calls goes, phase by phase, for benchmarks (system property
 * {@code lazarus.kt.parallel.profile=true}, read once: off, the JIT folds every recording away). Per phase index: the
 * serial opening ({@link PhasedBody#open}, which the other threads wait for), the span from the phase's publication to
 * its last chunk's end, the chunks' run time summed over threads, and each joining thread's delay from publication to
 * its first claim (its wake-up or return from the previous phase). {@code span · threads - busy} is the threads' idle
 * time inside the phase: joining late, or done while another runs the last chunk. Only calls of more than one phase
 * are counted (a forward pass); their openings' own nested calls count as opening time.
 */
public final class PhaseProfile {

    public static final boolean ON = Boolean.getBoolean("lazarus.kt.parallel.profile");

    private static final int MAX_PHASES = 256;
    private static final int OPENS = 0, OPEN_NS = 1, SPANS = 2, SPAN_NS = 3, BUSY_NS = 4, CHUNKS = 5, JOINS = 6,
            JOIN_NS = 7, FIELDS = 8;
    /** calls, their wall time on the caller, the threads of the last. */
    private static final int CALL_COUNT = MAX_PHASES * FIELDS, CALL_NS = CALL_COUNT + 1, CALL_THREADS = CALL_COUNT + 2,
            CALL_FIELDS = 3;
    /**
     * Each thread's own counts, summed by {@link #report}: shared counters would add a contended cache line per chunk,
     * the very cost being measured.
     */
    private static final List<long[]> ALL = new CopyOnWriteArrayList<>();
    private static final ThreadLocal<long[]> MINE = ThreadLocal.withInitial(() -> {
        long[] mine = new long[MAX_PHASES * FIELDS + CALL_FIELDS];
        ALL.add(mine);
        return mine;
    });

    private PhaseProfile() {}

    static void opened(int phase, long nanos) {
        add(phase, OPENS, 1);
        add(phase, OPEN_NS, nanos);
    }

    static void ended(int phase, long spanNanos) {
        add(phase, SPANS, 1);
        add(phase, SPAN_NS, spanNanos);
    }

    static void chunk(int phase, long nanos) {
        add(phase, CHUNKS, 1);
        add(phase, BUSY_NS, nanos);
    }

    static void joined(int phase, long delayNanos) {
        add(phase, JOINS, 1);
        add(phase, JOIN_NS, delayNanos);
    }

    static void call(long nanos, int threads) {
        long[] mine = MINE.get();
        mine[CALL_COUNT]++;
        mine[CALL_NS] += nanos;
        mine[CALL_THREADS] = threads;
    }

    private static void add(int phase, int field, long v) {
        if (phase < MAX_PHASES) {
            MINE.get()[phase * FIELDS + field] += v;
        }
    }

    /** Every thread's count at {@code index}, summed. */
    private static long sum(int index) {
        long s = 0;
        for (long[] t : ALL) {
            s += t[index];
        }
        return s;
    }

    /** Forgets everything recorded so far. */
    public static void reset() {
        for (long[] t : ALL) {
            java.util.Arrays.fill(t, 0);
        }
    }

    /**
     * A table of microseconds per call, {@code title} above it: per phase index its opening, span, busy time over the
     * threads ({@code busy/T}), idle thread time inside it over the threads ({@code (span·T - busy)/T}), the mean join
     * delay and chunks; then the sums and the call's wall time less its phases (posting, waking, returning).
     */
    public static String report(String title) {
        long calls = sum(CALL_COUNT);
        if (calls == 0) {
            return "# profile " + title + ": no phased calls\n";
        }
        int threads = (int) ALL.stream().mapToLong(t -> t[CALL_THREADS]).max().orElse(1);
        double perCall = 1e-3 / calls;
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "# profile %s: %d calls, %d threads, wall %.1f µs/call%n", title, calls,
                threads, sum(CALL_NS) * perCall));
        sb.append("# phase | open µs | span µs | busy/T µs | idle/T µs | join µs | joins | chunks\n");
        double open = 0, span = 0, busy = 0;
        for (int p = 0; p < MAX_PHASES; p++) {
            long opens = sum(p * FIELDS + OPENS);
            if (opens == 0) {
                continue;
            }
            double o = sum(p * FIELDS + OPEN_NS) * perCall;
            double s = sum(p * FIELDS + SPAN_NS) * perCall;
            double b = sum(p * FIELDS + BUSY_NS) * perCall / threads;
            long joins = sum(p * FIELDS + JOINS);
            double j = joins == 0 ? 0 : sum(p * FIELDS + JOIN_NS) * 1e-3 / joins;
            open += o;
            span += s;
            busy += b;
            sb.append(String.format(Locale.ROOT, "# %5d | %7.1f | %7.1f | %9.1f | %9.1f | %7.1f | %5.1f | %6.1f%n", p, o,
                    s, b, s - b, j, (double) joins / calls, (double) sum(p * FIELDS + CHUNKS) / calls));
        }
        double wall = sum(CALL_NS) * perCall;
        sb.append(String.format(Locale.ROOT,
                "# sum   | %7.1f | %7.1f | %9.1f | %9.1f |  outside phases %.1f µs (wall %.1f)%n",
                open, span, busy, span - busy, wall - open - span, wall));
        return sb.toString();
    }
}
