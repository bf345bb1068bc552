package dev.lazarus.kt.tensor.bench;

import dev.lazarus.kt.tensor.FloatOps;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/** The element-wise operations of a transformer layer at model width. */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class FloatOpsBenchmark {

    @Param({"4096"})
    public int n;

    private float[] a;
    private float[] b;
    private float[] out;

    @Setup
    public void setUp() {
        Random rnd = new Random(1);
        a = new float[n];
        b = new float[n];
        out = new float[n];
        for (int i = 0; i < n; i++) {
            a[i] = (float) rnd.nextGaussian();
            b[i] = (float) rnd.nextGaussian();
        }
    }

    @Benchmark
    public float dot() {
        return FloatOps.dot(a, b, n);
    }

    @Benchmark
    public float[] rmsnorm() {
        FloatOps.rmsnorm(a, b, out, n, 1e-6f);
        return out;
    }

    @Benchmark
    public float[] softmax() {
        System.arraycopy(a, 0, out, 0, n);
        FloatOps.softmax(out, 0, n);
        return out;
    }

    @Benchmark
    public float[] swiglu() {
        System.arraycopy(a, 0, out, 0, n);
        FloatOps.swiglu(out, b, n);
        return out;
    }
}
