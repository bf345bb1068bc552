package dev.lazarus.kt.gpu;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;

import dev.lazarus.kt.model.SwiGlu;
import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.placement.ExpertCheckout;
import java.lang.foreign.MemorySegment;

/** The batched prompt's CPU-tier experts of one block, computed by the CPU for all their tokens in one pass. */
final class HostExperts {

    private HostExperts() {}

    /**
     * Per token (rows of {@code dim}) the weighted sum of its choices computed on the host ({@link
     * ExpertGroups#hostSlots}), in routing order as the CPU path and the decode path sum: {@code normed} holds the
     * tokens' normed activations ({@code n} rows of {@code dim} floats), {@code weights} the routing weights by slot.
     */
    static float[] sums(Parallel parallel, ExpertGroups g, ExpertCheckout layer, MemorySegment normed,
                        MemorySegment weights, int n, int k, int dim) {
        int count = 0;
        for (int[] s : g.hostSlots) {
            count += s == null ? 0 : 1;
        }
        SwiGlu.Weights[] nets = new SwiGlu.Weights[count];
        float[][][] inputs = new float[count][][];
        float[][] xn = new float[n][];
        int c = 0;
        for (int e = 0; e < g.hostSlots.length; e++) {
            int[] s = g.hostSlots[e];
            if (s == null) {
                continue;
            }
            nets[c] = layer.cpu(e);
            inputs[c] = new float[s.length][];
            for (int i = 0; i < s.length; i++) {
                int t = s[i] / k;
                if (xn[t] == null) {
                    xn[t] = new float[dim];
                    MemorySegment.copy(normed, JAVA_FLOAT, 4L * t * dim, xn[t], 0, dim);
                }
                inputs[c][i] = xn[t];
            }
            c++;
        }
        float[][][] outputs = SwiGlu.apply(parallel, nets, inputs);
        float[][] bySlot = new float[n * k][];
        c = 0;
        for (int[] s : g.hostSlots) {
            if (s != null) {
                for (int i = 0; i < s.length; i++) {
                    bySlot[s[i]] = outputs[c][i];
                }
                c++;
            }
        }
        float[] sums = new float[n * dim];
        for (int t = 0; t < n; t++) {
            for (int j = 0; j < k; j++) {
                float[] y = bySlot[t * k + j];
                if (y == null) {
                    continue;
                }
                float w = weights.getAtIndex(JAVA_FLOAT, (long) t * k + j);
                for (int d = 0; d < dim; d++) {
                    sums[t * dim + d] += y[d] * w;
                }
            }
        }
        return sums;
    }
}
