package dev.lazarus.kt.model;

import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.Parallel;
import dev.lazarus.kt.tensor.WeightMatrix;

/**
 * SwiGLU feed-forward networks, {@code down(silu(gate·x) * up·x)}, applied to groups of vectors in
 * two parallel passes: gate, up and the activation fused per hidden row, then down. A routed expert,
 * a shared expert and a dense FFN are all this; with many experts each gets its own group of
 * tokens and every expert's weights are read once for its whole group.
 */
public final class SwiGlu {

    /** One SwiGLU network: {@code gate}, {@code up}: hidden × dim; {@code down}: dim × hidden. */
    public record Weights(WeightMatrix gate, WeightMatrix up, WeightMatrix down) {
        public int hidden() {
            return gate.rows();
        }
    }

    private SwiGlu() {}

    /** {@code result[j][t]} = network {@code nets[j]} applied to {@code inputs[j][t]}. */
    public static float[][][] apply(Parallel parallel, Weights[] nets, float[][][] inputs) {
        int jobs = nets.length;
        float[][][] gate = new float[jobs][][];
        float[][][] up = new float[jobs][][];
        float[][][] hidden = new float[jobs][][];
        float[][][] out = new float[jobs][][];
        int[] hiddenRows = new int[jobs];
        int[] outRows = new int[jobs];
        for (int j = 0; j < jobs; j++) {
            int tokens = inputs[j].length;
            hiddenRows[j] = nets[j].hidden();
            outRows[j] = nets[j].down().rows();
            gate[j] = new float[tokens][hiddenRows[j]];
            up[j] = new float[tokens][hiddenRows[j]];
            hidden[j] = new float[tokens][hiddenRows[j]];
            out[j] = new float[tokens][outRows[j]];
        }
        // activations are converted once per pass, not once per row chunk
        Activation[][] gateIn = new Activation[jobs][];
        Activation[][] upIn = new Activation[jobs][];
        for (int j = 0; j < jobs; j++) {
            WeightMatrix g = nets[j].gate(), u = nets[j].up();
            gateIn[j] = Activation.convertAll(parallel, g.vecDotType(), inputs[j], g.cols());
            upIn[j] = u.vecDotType() == g.vecDotType() ? gateIn[j] : Activation.convertAll(parallel, u.vecDotType(), inputs[j], u.cols());
        }
        RowSplitter.run(parallel, hiddenRows, (j, from, to) -> {
            nets[j].gate().matmul(gateIn[j], gate[j], from, to);
            nets[j].up().matmul(upIn[j], up[j], from, to);
            for (int t = 0; t < inputs[j].length; t++) {
                for (int r = from; r < to; r++) {
                    hidden[j][t][r] = Numerics.silu(gate[j][t][r], r, hiddenRows[j]) * up[j][t][r];
                }
            }
        });
        Activation[][] downIn = new Activation[jobs][];
        for (int j = 0; j < jobs; j++) {
            downIn[j] = Activation.convertAll(parallel, nets[j].down().vecDotType(), hidden[j], nets[j].down().cols());
        }
        RowSplitter.run(parallel, outRows, (j, from, to) -> nets[j].down().matmul(downIn[j], out[j], from, to));
        return out;
    }
}
