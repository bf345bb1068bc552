package dev.lazarus.kt.bench;

import dev.lazarus.kt.parallel.Parallel;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * A STREAM-like measurement of main-memory bandwidth on the benchmark's threads: the triad
 * {@code a = b + s·c} (two arrays read, one written: 12 bytes per element) and a read-only sum
 * (4 bytes per element, what a decode step's weight streaming looks like). Arrays are far larger
 * than the last-level cache; the best of several passes is reported, as STREAM does.
 */
final class MemoryBandwidth {

    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    /** 64 Mi floats = 256 MiB per array, 8× a 32 MiB L3. */
    private static final int N = 64 << 20;

    record Result(double triadGBs, double readGBs) {}

    private MemoryBandwidth() {
    }

    static Result measure(Parallel parallel, int passes) {
        float[] a = new float[N], b = new float[N], c = new float[N];
        parallel.forRange(N, 1 << 16, (s, e) -> {
            for (int i = s; i < e; i++) {
                b[i] = i & 1023;
                c[i] = 1f;
            }
        });
        double bestTriad = Double.MAX_VALUE, bestRead = Double.MAX_VALUE;
        double[] sink = new double[1];
        for (int p = 0; p < passes; p++) {
            long t0 = System.nanoTime();
            parallel.forRange(N, 1 << 16, (s, e) -> {
                for (int i = s; i < e; i += F.length()) {
                    FloatVector.fromArray(F, b, i).add(FloatVector.fromArray(F, c, i).mul(3f)).intoArray(a, i);
                }
            });
            bestTriad = Math.min(bestTriad, System.nanoTime() - t0);
            t0 = System.nanoTime();
            parallel.forRange(N, 1 << 16, (s, e) -> {
                FloatVector acc0 = FloatVector.zero(F), acc1 = FloatVector.zero(F);
                for (int i = s; i < e; i += 2 * F.length()) {
                    acc0 = acc0.add(FloatVector.fromArray(F, a, i));
                    acc1 = acc1.add(FloatVector.fromArray(F, a, i + F.length()));
                }
                float r = acc0.add(acc1).reduceLanes(VectorOperators.ADD);
                synchronized (sink) {
                    sink[0] += r;
                }
            });
            bestRead = Math.min(bestRead, System.nanoTime() - t0);
        }
        if (sink[0] == 42.4242) {
            System.out.print("");
        }
        return new Result(12.0 * N / bestTriad, 4.0 * N / bestRead);
    }
}
