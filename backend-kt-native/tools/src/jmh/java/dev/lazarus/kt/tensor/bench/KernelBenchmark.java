package dev.lazarus.kt.tensor.bench;

import dev.lazarus.kt.gguf.GgmlCodec;
import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.matrix.WeightMatrices;
import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.WeightMatrix;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Matrix kernels per weight type: one row range on one thread (the kernel itself), the whole matrix
 * on the shared pool (what a decode step does), a batch of 8 vectors (prefill / batched decode), and
 * the activation conversion. Bytes per op / time gives the effective bandwidth. Run with
 * {@code ./mvnw -q -pl backend-kt-native/tools -am -Pjmh verify -DskipTests -Djmh.args="KernelBenchmark -f 1 -wi 3 -i 5"};
 * add {@code -p impl=scalar} for the reference kernels. Q4_K and Q4_0 with rows a multiple of 8 run the repacked
 * kernels llama-server's order asks for; {@code -p rows=2047} measures the in-place ones instead;
 * {@code -p type=Q4_K -p impl=vector,ram} Q4_K in place and in the RAM tier's packed layout. The Java kernels'
 * bit-identical alternatives (f32 products, other row groupings) are measured with the bench sources'
 * {@code ExpertKernelBench} and {@code JavaTwins}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class KernelBenchmark {

    @Param({"F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q4_K", "Q5_K", "Q6_K"})
    public GgmlType type;

    @Param({"vector"})
    public String impl;

    @Param({"2048"})
    public int rows;

    @Param({"4096"})
    public int cols;

    private Arena arena;
    private WeightMatrix matrix;
    private float[] x;
    private float[][] batch;
    private float[] out;
    private float[][] outs;
    private Activation activation;

    @Setup(Level.Trial)
    public void setUp() {
        Random rnd = new Random(1);
        float[] w = new float[rows * cols];
        for (int i = 0; i < w.length; i++) {
            w[i] = (float) rnd.nextGaussian() * 0.02f;
        }
        byte[] bytes = GgmlCodec.encode(type, w);
        arena = Arena.ofShared();
        // off-heap and page-aligned, like a mapped GGUF tensor
        MemorySegment data = arena.allocate(bytes.length, 4096);
        MemorySegment.copy(MemorySegment.ofArray(bytes), 0, data, 0, bytes.length);
        matrix = switch (impl) {
            case "scalar" -> WeightMatrices.scalar(type, data, rows, cols);
            case "ram" -> WeightMatrices.defaults().copiedExpert(type, data, rows, cols, true, arena);
            default -> WeightMatrices.defaults().of(type, data, rows, cols);
        };
        x = new float[cols];
        batch = new float[8][cols];
        for (int i = 0; i < cols; i++) {
            x[i] = (float) rnd.nextGaussian();
            for (float[] b : batch) {
                b[i] = (float) rnd.nextGaussian();
            }
        }
        out = new float[rows];
        outs = new float[8][rows];
        activation = Activation.allocate(matrix.vecDotType(), cols);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        arena.close();
    }

    @Benchmark
    public float[] matvecOneThread() {
        matrix.matvec(x, out, 0, rows);
        return out;
    }

    @Benchmark
    public float[] matvecParallel() {
        matrix.matvec(x, out);
        return out;
    }

    @Benchmark
    public float[][] matmulBatch8OneThread() {
        matrix.matmul(batch, outs, 0, rows);
        return outs;
    }

    @Benchmark
    public Activation convertActivation() {
        return activation.set(x, cols);
    }
}
