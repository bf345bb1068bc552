package dev.lazarus.kt.model;

import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.VecDotType;
import dev.lazarus.kt.tensor.WeightMatrix;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Converts the inputs of several matrices that may read the same vectors, each distinct vector (by identity) once
 * per vec-dot type and width: the routed experts of a decode step all read the one token, and converting it once
 * per expert was most of the serial work between the router and the experts' rows.
 */
final class SharedActivations {

    private SharedActivations() {}

    /** {@code result[j][t]}: {@code inputs[j][t]} converted for {@code matrices[j]}, in activations of {@code scratch}. */
    static Activation[][] convert(Parallel parallel, WeightMatrix[] matrices, float[][][] inputs, Scratch scratch) {
        Activation[][] out = new Activation[matrices.length][];
        for (int j = 0; j < matrices.length; j++) {
            if (out[j] != null) {
                continue;
            }
            VecDotType type = matrices[j].vecDotType();
            int cols = matrices[j].cols();
            // every job from j on whose matrix takes the same conversion, and the distinct vectors they read
            List<Integer> jobs = new ArrayList<>();
            Map<float[], Integer> index = new IdentityHashMap<>();
            List<float[]> distinct = new ArrayList<>();
            for (int o = j; o < matrices.length; o++) {
                if (out[o] == null && matrices[o].vecDotType() == type && matrices[o].cols() == cols) {
                    jobs.add(o);
                    for (float[] x : inputs[o]) {
                        if (index.putIfAbsent(x, distinct.size()) == null) {
                            distinct.add(x);
                        }
                    }
                }
            }
            Activation[] converted = scratch.convert(parallel, type, distinct.toArray(float[][]::new), cols);
            for (int o : jobs) {
                out[o] = new Activation[inputs[o].length];
                for (int t = 0; t < inputs[o].length; t++) {
                    out[o][t] = converted[index.get(inputs[o][t])];
                }
            }
        }
        return out;
    }
}
