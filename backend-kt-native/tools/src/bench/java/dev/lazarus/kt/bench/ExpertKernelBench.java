package dev.lazarus.kt.bench;

import dev.lazarus.kt.gguf.GgmlCodec;
import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.gguf.GridQuants;
import dev.lazarus.kt.matrix.JavaTwins;
import dev.lazarus.kt.matrix.WeightMatrices;
import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.WeightMatrix;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteOrder;
import java.util.Random;

/**
 * One thread's RAM-tier expert GEMV (decode), kernel set against kernel set ({@code -Dlazarus.kt.kernels} per copy),
 * alternated round by round: {@code experts} matrices of {@code rows × cols} (more than the L3, so DRAM streams), each
 * multiplied in turn. Reports the thread's CPU time per matrix besides wall time: on a machine shared with other
 * work the CPU time is the kernels' own (memory contention aside). Usage: {@code ExpertKernelBench [type] [rounds]
 * [batch] [how] [sets] [rows]
 * [cols]} (type Q4_K, Q6_K, Q8_0, or a grid I-quant such as IQ2_XXS on random blocks, which the engine does not encode; batch: vectors per product, 1 = decode; how: {@code copied} (RAM-tier
 * expert, default), {@code in-place} (a dense matrix read in place) or {@code repacked} (a dense matrix copied at
 * load); sets: comma-separated kernel settings, default {@code auto,java}, or a Java kernel's bit-identical
 * alternative by its {@link JavaTwins} name, e.g. {@code java,q4k-f32} or {@code java,q4k-ram-g1}, which ignores how;
 * rows × cols: one matrix's shape, default 512 × 1024, e.g. 768 × 2048 for Qwen3-30B-A3B's gate and up experts).
 * Native kernels on ggml's blocks against a native layout copied at load: {@code in-place} against {@code copied}
 * (Q4_K, Q8_0 where AVX-512 VNNI runs), one JVM each, alternated.
 */
public final class ExpertKernelBench {

    public static void main(String[] args) {
        GgmlType type = GgmlType.valueOf(args.length > 0 ? args[0] : "Q4_K");
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        int batch = args.length > 2 ? Integer.parseInt(args[2]) : 1;
        String how = args.length > 3 ? args[3] : "copied";
        int rows = args.length > 5 ? Integer.parseInt(args[5]) : 512, cols = args.length > 6 ? Integer.parseInt(args[6]) : 1024;
        // more bytes than any L3 (at least 48 matrices, 96 MB), so that DRAM streams
        int experts = (int) Math.max(48, 96L * 1024 * 1024 / type.bytesFor((long) rows * cols));
        Random rnd = new Random(1);
        float[] values = new float[rows * cols];
        String[] sets = (args.length > 4 ? args[4] : "auto,java").split(",");
        WeightMatrix[][] ms = new WeightMatrix[sets.length][experts];
        for (int e = 0; e < experts; e++) {
            for (int i = 0; i < values.length; i++) {
                values[i] = (float) rnd.nextGaussian() * 0.02f;
            }
            MemorySegment data = GridQuants.covers(type) ? gridBlocks(type, rows * cols, rnd)
                    : MemorySegment.ofArray(GgmlCodec.encode(type, values));
            for (int s = 0; s < sets.length; s++) {
                System.setProperty("lazarus.kt.kernels", twin(sets[s]) ? "java" : sets[s]);
                ms[s][e] = twin(sets[s]) ? JavaTwins.of(sets[s], type, data, rows, cols, Arena.ofAuto()) : switch (how) {
                    // off the heap, as the mapped file is
                    case "in-place" -> WeightMatrices.defaults().of(type, Arena.ofAuto().allocate(data.byteSize(), 64).copyFrom(data), rows, cols);
                    case "repacked" -> WeightMatrices.defaults().repacked(type, data, rows, cols, Arena.ofAuto());
                    default -> WeightMatrices.defaults().copiedExpert(type, data, rows, cols, true, Arena.ofAuto());
                };
            }
        }
        float[][] xs = new float[batch][cols];
        for (float[] x : xs) {
            for (int i = 0; i < cols; i++) {
                x[i] = (float) rnd.nextGaussian();
            }
        }
        float[][] outs = new float[batch][rows];
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long bytes = type.bytesFor((long) rows * cols);
        for (int round = 0; round < rounds; round++) {
            StringBuilder line = new StringBuilder("round " + round + ":");
            for (int s = 0; s < sets.length; s++) {
                System.setProperty("lazarus.kt.kernels", twin(sets[s]) ? "java" : sets[s]);
                Activation[] as = new Activation[batch];
                for (int b = 0; b < batch; b++) {
                    as[b] = Activation.allocate(ms[s][0].vecDotType(), cols).set(xs[b]);
                }
                int reps = 2000 / batch;
                for (int warm = 0; warm < 2; warm++) {
                    long cpu0 = mx.getCurrentThreadCpuTime(), t0 = System.nanoTime();
                    for (int r = 0; r < reps; r++) {
                        WeightMatrix m = ms[s][r % experts];
                        if (batch == 1) {
                            m.matvec(as[0], outs[0], 0, rows);
                        } else {
                            m.matmul(as, outs, 0, rows);
                        }
                    }
                    long cpu = mx.getCurrentThreadCpuTime() - cpu0, wall = System.nanoTime() - t0;
                    if (warm == 1) {
                        line.append(String.format(" %s %.1f us/matrix cpu (%.2f GB/s), %.1f wall |", sets[s],
                                cpu / 1e3 / reps, (double) bytes * reps / cpu, wall / 1e3 / reps));
                    }
                }
            }
            System.out.println(line + " load " + ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        }
    }

    /** Random grid I-quant blocks (the kernels' cost does not depend on the values) with an ordinary f16 scale d. */
    private static MemorySegment gridBlocks(GgmlType type, int values, Random rnd) {
        ValueLayout.OfShort i16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
        byte[] bytes = new byte[Math.toIntExact(type.bytesFor(values))];
        rnd.nextBytes(bytes);
        MemorySegment data = MemorySegment.ofArray(bytes);
        short d = Float.floatToFloat16(0.001f + 0.01f * rnd.nextFloat());
        for (long blk = 0; blk < bytes.length; blk += type.typeSize()) {
            if (type == GgmlType.IQ1_M) { // d's sixteen bits are the top nibbles of the four scale words
                for (int i = 0; i < 4; i++) {
                    long at = blk + 48 + 2L * i;
                    data.set(i16, at, (short) ((data.get(i16, at) & 0x0FFF) | ((d >> (4 * i)) & 0xF) << 12));
                }
            } else {
                data.set(i16, blk, d);
            }
        }
        return data;
    }

    /** Whether kernel set {@code set} names a {@link JavaTwins} alternative rather than a kernel selection. */
    private static boolean twin(String set) {
        return set.startsWith("q4k-") || set.startsWith("q6k-");
    }
}
