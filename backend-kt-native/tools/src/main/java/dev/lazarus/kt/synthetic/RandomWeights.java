package dev.lazarus.kt.synthetic;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.gguf.GgufWriter;
import dev.lazarus.kt.synthetic.TensorLayout.Entry;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;

/**
 * Deterministic random values for synthetic tensors. Each tensor draws from its own stream, seeded by the
 * model seed and the tensor's name, so adding or reordering tensors never changes the others. Values are
 * uniform (cheap, and as good as Gaussian here) with these standard deviations:
 * <ul>
 *   <li>matrices: 1/sqrt(fan-in), so a projection keeps unit-scale activations at unit scale;</li>
 *   <li>embeddings: 1 (the first RMS norm rescales them anyway);</li>
 *   <li>output head: 3/sqrt(dim), logits with a standard deviation near 3, so greedy picks are clear;</li>
 *   <li>router: 2/sqrt(dim), so expert choices are rarely near-ties that rounding could flip;</li>
 *   <li>norm weights: 1 +- 0.2, so an engine that forgets to apply them is caught;</li>
 *   <li>biases ({@code exp_probs_b}, projection and expert biases): +- 0.1, enough to change some expert choices;</li>
 *   <li>a DeltaNet's {@code ssm_a}: -1 +- 0.5 (a decay of the state by about half per token);</li>
 *   <li>attention sinks: standard deviation 1, near the scale of the attention logits, so the sink takes a visible
 *       share of the softmax without swamping it.</li>
 * </ul>
 * One-dimensional tensors, biases (gpt-oss's experts' are two-dimensional) and the router stay F32 (as llama.cpp's converter and quantizer keep them);
 * a matrix whose rows do not fit the weight type's block size falls back to F16.
 */
final class RandomWeights {

    private final long seed;
    private final GgmlType weightType;

    RandomWeights(long seed, GgmlType weightType) {
        this.seed = seed;
        this.weightType = weightType;
    }

    void add(GgufWriter w, Entry t) {
        w.addTensor(t.name(), values(t), t.shape(), typeOf(t));
    }

    /** The values of {@code t} as written, before any quantization (a test reads one tensor without the whole file). */
    float[] values(Entry t) {
        return t.derive().apply(drawn(t));
    }

    GgmlType typeOf(Entry t) {
        if (t.shape().length == 1 || t.init() == TensorLayout.Init.ROUTER || t.init() == TensorLayout.Init.BIAS
                || t.init() == TensorLayout.Init.CONV) {
            return GgmlType.F32;
        }
        return t.shape()[0] % weightType.blockSize() == 0 ? weightType : GgmlType.F16;
    }

    private float[] drawn(Entry t) {
        long n = 1;
        for (long d : t.sourceShape()) {
            n = Math.multiplyExact(n, d);
        }
        float[] v = new float[Math.toIntExact(n)];
        SplittableRandom random = new SplittableRandom(streamSeed(t.source()));
        double centre = t.init() == TensorLayout.Init.NORM ? 1.0 : t.init() == TensorLayout.Init.DECAY ? -1.0 : 0.0;
        // A uniform variable on [-a, a) has standard deviation a/sqrt(3).
        double halfWidth = Math.sqrt(3.0) * std(t);
        for (int i = 0; i < v.length; i++) {
            v[i] = (float) (centre + (2 * random.nextDouble() - 1) * halfWidth);
        }
        return v;
    }

    private static double std(Entry t) {
        double fanIn = t.fanIn();
        return switch (t.init()) {
            case EMBEDDING -> 1.0;
            case MATRIX, CONV -> 1.0 / Math.sqrt(fanIn);
            case DECAY -> 0.5 / Math.sqrt(3.0);
            case OUTPUT -> 3.0 / Math.sqrt(fanIn);
            case ROUTER -> 2.0 / Math.sqrt(fanIn);
            case NORM -> 0.2 / Math.sqrt(3.0);
            case BIAS -> 0.1 / Math.sqrt(3.0);
            case SINK -> 1.0;
        };
    }

    /** FNV-1a of the name mixed with the model seed: stable across JVMs, unlike identity hashes. */
    private long streamSeed(String tensorName) {
        long h = 0xcbf29ce484222325L;
        for (byte b : tensorName.getBytes(StandardCharsets.UTF_8)) {
            h = (h ^ (b & 0xff)) * 0x100000001b3L;
        }
        return h ^ (seed * 0x9E3779B97F4A7C15L);
    }
}
