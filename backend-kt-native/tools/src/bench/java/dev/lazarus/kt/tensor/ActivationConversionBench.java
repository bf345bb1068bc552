package dev.lazarus.kt.tensor;

import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Random;

/**
 * One thread's activation conversion where native kernels are selected, the C conversion ({@code lz_quant.h}, what
 * {@link Activation#set} does now) against the Java one followed by the copy into the native form (what it did
 * before: {@link Activation#set} in Java, then {@link NativeKernels#writeActivation}), alternated round by round on
 * the same rows; the thread's CPU time per row. Usage: {@code ActivationConversionBench [cols] [rounds]} (cols a
 * multiple of 256, default 2048).
 */
public final class ActivationConversionBench {

    public static void main(String[] args) {
        int cols = args.length > 0 ? Integer.parseInt(args[0]) : 2048;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        Random rnd = new Random(1);
        float[][] xs = new float[64][cols];
        for (float[] x : xs) {
            for (int i = 0; i < cols; i++) {
                x[i] = (float) rnd.nextGaussian();
            }
        }
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        for (VecDotType type : new VecDotType[] {VecDotType.Q8_0, VecDotType.Q8_K}) {
            System.setProperty(KernelConfig.KERNELS_PROPERTY, "native");
            Activation c = Activation.allocate(type, cols);
            System.setProperty(KernelConfig.KERNELS_PROPERTY, "java");
            Activation j = Activation.allocate(type, cols);
            MemorySegment form = NativeKernels.allocateActivation(type, cols);
            int reps = 200_000 * 1024 / cols;
            for (int round = 0; round < rounds; round++) {
                long sink = 0;
                long cpu0 = mx.getCurrentThreadCpuTime();
                for (int r = 0; r < reps; r++) {
                    c.set(xs[r & 63], cols);
                    sink += (long) c.scales[0];
                }
                long cpu1 = mx.getCurrentThreadCpuTime();
                for (int r = 0; r < reps; r++) {
                    j.set(xs[r & 63], cols);
                    NativeKernels.writeActivation(form, cols, type, j.values, j.scales, j.bsums, cols);
                    sink += (long) j.scales[0];
                }
                long cpu2 = mx.getCurrentThreadCpuTime();
                double nativeNs = (cpu1 - cpu0) / (double) reps, javaNs = (cpu2 - cpu1) / (double) reps;
                System.out.printf("%s cols %d round %d: native %.0f ns/row, java+copy %.0f ns/row, java/native %.2f (%d)%n",
                        type, cols, round, nativeNs, javaNs, javaNs / nativeNs, sink & 1);
            }
        }
    }
}
