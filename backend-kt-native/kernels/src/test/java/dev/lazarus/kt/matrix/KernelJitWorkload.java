package dev.lazarus.kt.matrix;

import dev.lazarus.kt.gguf.GgmlCodec;
import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.tensor.WeightMatrix;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Runs every kernel of {@link WeightMatrices} long enough for C2 to compile it, in the order that hurt most in one
 * JVM: the 512-bit K-quant kernels first (a Q4_K_M model), then Q8_0 (256-bit) and the rest. The child JVM of
 * {@link KernelInliningTest}; its own main so that the JIT profiles it builds are those of this sequence only.
 */
public final class KernelJitWorkload {

    private static final int ROWS = 64;
    private static final int COLS = 512;
    private static final int BATCH = 12;

    private KernelJitWorkload() {
    }

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 60;
        Random rnd = new Random(42);
        try (Arena arena = Arena.ofConfined()) {
            List<WeightMatrix> ms = new ArrayList<>();
            // a Q4_K_M model: Q4_K in place (experts; dense, whose batches take the GEMM order), packed into the RAM
            // tier, repacked dense; Q6_K; then the others
            ms.add(WeightMatrices.defaults().expert(GgmlType.Q4_K, weights(GgmlType.Q4_K, rnd, arena), ROWS, COLS));
            ms.add(WeightMatrices.defaults().of(GgmlType.Q4_K, weights(GgmlType.Q4_K, rnd, arena), ROWS, COLS));
            ms.add(WeightMatrices.defaults().copiedExpert(GgmlType.Q4_K, weights(GgmlType.Q4_K, rnd, arena), ROWS, COLS, true, arena));
            ms.add(WeightMatrices.defaults().repacked(GgmlType.Q4_K, weights(GgmlType.Q4_K, rnd, arena), ROWS, COLS, arena));
            ms.add(WeightMatrices.defaults().of(GgmlType.Q6_K, weights(GgmlType.Q6_K, rnd, arena), ROWS, COLS));
            ms.add(WeightMatrices.defaults().copiedExpert(GgmlType.Q6_K, weights(GgmlType.Q6_K, rnd, arena), ROWS, COLS, true, arena));
            ms.add(WeightMatrices.defaults().of(GgmlType.Q5_K, weights(GgmlType.Q5_K, rnd, arena), ROWS, COLS));
            for (GgmlType t : List.of(GgmlType.Q8_0, GgmlType.Q4_0, GgmlType.Q4_1, GgmlType.Q5_0, GgmlType.Q5_1,
                    GgmlType.F16, GgmlType.BF16, GgmlType.F32)) {
                ms.add(WeightMatrices.defaults().of(t, weights(t, rnd, arena), ROWS, COLS));
            }
            for (WeightMatrix m : ms) {
                run(m, rnd, rounds);
            }
        }
    }

    /** Prefill (four-activation groups, and the tiled path where the type has one) and decode products. */
    private static void run(WeightMatrix m, Random rnd, int rounds) {
        float[][] xs = new float[BATCH][COLS];
        for (float[] x : xs) {
            for (int i = 0; i < COLS; i++) {
                x[i] = (float) rnd.nextGaussian();
            }
        }
        float[][] outs = new float[BATCH][ROWS];
        float[][] four = new float[4][];
        System.arraycopy(xs, 0, four, 0, 4);
        for (int r = 0; r < rounds; r++) {
            m.matmul(xs, outs, 0, ROWS);
            m.matmul(four, outs, 0, ROWS);
            m.matvec(xs[r % BATCH], outs[0], 0, ROWS);
        }
    }

    private static MemorySegment weights(GgmlType type, Random rnd, Arena arena) {
        float[] v = new float[ROWS * COLS];
        for (int i = 0; i < v.length; i++) {
            v[i] = (float) rnd.nextGaussian() * 0.02f;
        }
        byte[] bytes = GgmlCodec.encode(type, v);
        return arena.allocate(bytes.length, 64).copyFrom(MemorySegment.ofArray(bytes));
    }
}
