package dev.lazarus.kt.model;

import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.parallel.RowSplitter;
import dev.lazarus.kt.parallel.Signal;
import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.WeightMatrix;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.function.UnaryOperator;

/**
 * SwiGLU feed-forward networks, {@code down(silu(gate·x) * up·x)}, applied to groups of vectors in
 * ONE parallel pass: the hidden rows of every network (gate, up and the activation fused per row),
 * then the output rows of every network. A thread that reaches network j's down rows waits only for
 * j's own hidden rows, which the pass ordered before all down rows, so in a decode step with several
 * routed experts the threads move on to the next expert instead of meeting at a barrier; whichever
 * thread finishes j's last hidden rows converts j's hidden vectors for down. A routed expert, a shared
 * expert and a dense FFN are all this; with many experts each gets its own group of tokens and every
 * expert's weights are read once for its whole group.
 */
public final class SwiGlu {

    /**
     * One SwiGLU network: {@code gate}, {@code up}: hidden × dim; {@code down}: dim × hidden; {@code glu}: the
     * activation and biases ({@link Glu#SWIGLU} for all but gpt-oss's experts).
     */
    public record Weights(WeightMatrix gate, WeightMatrix up, WeightMatrix down, Glu glu) {
        public Weights(WeightMatrix gate, WeightMatrix up, WeightMatrix down) {
            this(gate, up, down, Glu.SWIGLU);
        }

        public int hidden() {
            return gate.rows();
        }
    }

    private SwiGlu() {}

    /** {@code result[j][t]} = network {@code nets[j]} applied to {@code inputs[j][t]}. */
    public static float[][][] apply(Parallel parallel, Weights[] nets, float[][][] inputs) {
        return begin(parallel, nets, inputs).complete();
    }

    /**
     * {@link #apply}, with {@code meanwhile} run by the calling thread while the pool's other threads start on the
     * rows ({@link Parallel#forRange(int, int, dev.lazarus.kt.parallel.IntRangeBody, Runnable)}): the GPU layer path
     * launches the GPU's experts of the same block there.
     */
    public static float[][][] apply(Parallel parallel, Weights[] nets, float[][][] inputs, Runnable meanwhile) {
        return begin(parallel, nets, inputs).complete(meanwhile);
    }

    /**
     * {@link #apply} as one phase of the caller's pool call: converts the inputs now, then {@link Pass#run} over
     * {@link Pass#rows()} (chunk boundaries on {@link Pass#grain()}), then {@link Pass#finish()}.
     */
    public static Pass begin(Parallel parallel, Weights[] nets, float[][][] inputs) {
        Scratch scratch = SCRATCH.take();
        try {
            return new Pass(parallel, nets, inputs, scratch);
        } catch (RuntimeException | Error e) {
            SCRATCH.give(scratch);
            throw e;
        }
    }

    /**
     * The working buffers of a call (activations, gate, up and hidden vectors; not the outputs): one slot for the
     * whole process, as every caller (experts and dense FFNs of any block or model) borrows the same shapes over
     * and over, and a concurrent call simply works with buffers of its own.
     */
    private static final Scratch.Slot SCRATCH = Scratch.Slot.retaining(Scratch.RETAINED_BYTES);

    /**
     * The buffers and hand-offs of one {@link #apply}: rows {@code [0, rows())} are every network's hidden rows, then
     * every network's output rows.
     */
    public static final class Pass {

        private final Parallel parallel;
        private final Weights[] nets;
        private final float[][][] inputs;
        private final int jobs;
        private final float[][][] gate, up, hidden, out;
        private final Activation[][] gateIn, upIn;
        private final Scratch scratch;
        private final RowSplitter rows;
        /** Hidden rows of each network not yet computed. */
        private final AtomicIntegerArray pendingHidden;
        /** Each network's hidden vectors converted for down: converted once its hidden rows are done, then {@link #ready} opens. */
        private final Activation[][] downIn;
        private final Signal[] ready;
        private volatile boolean failed;
        private UnaryOperator<float[][][]> then;

        Pass(Parallel parallel, Weights[] nets, float[][][] inputs, Scratch scratch) {
            this.parallel = parallel;
            this.nets = nets;
            this.inputs = inputs;
            this.jobs = nets.length;
            this.scratch = scratch;
            this.gate = new float[jobs][][];
            this.up = new float[jobs][][];
            this.hidden = new float[jobs][][];
            this.out = new float[jobs][][];
            this.pendingHidden = new AtomicIntegerArray(jobs);
            this.downIn = new Activation[jobs][];
            this.ready = new Signal[jobs];
            for (int j = 0; j < jobs; j++) {
                int tokens = inputs[j].length;
                int hiddenRows = nets[j].hidden();
                // every hidden row of every token is written (gate and up by the products, hidden by the activation)
                gate[j] = scratch.floats(tokens, hiddenRows);
                up[j] = scratch.floats(tokens, hiddenRows);
                hidden[j] = scratch.floats(tokens, hiddenRows);
                pendingHidden.set(j, hiddenRows);
                ready[j] = new Signal();
                // borrowed here, on the calling thread; filled by whichever thread finishes j's hidden rows
                WeightMatrix down = nets[j].down();
                downIn[j] = new Activation[tokens];
                for (int t = 0; t < tokens; t++) {
                    downIn[j][t] = scratch.activation(down.vecDotType(), down.cols());
                }
            }
            // activations are converted once per call (not once per row chunk), and each vector once for all networks
            WeightMatrix[] gates = new WeightMatrix[jobs], ups = new WeightMatrix[jobs];
            boolean sameForUp = true;
            for (int j = 0; j < jobs; j++) {
                gates[j] = nets[j].gate();
                ups[j] = nets[j].up();
                sameForUp &= ups[j].vecDotType() == gates[j].vecDotType() && ups[j].cols() == gates[j].cols();
            }
            this.gateIn = SharedActivations.convert(parallel, gates, inputs, scratch);
            this.upIn = sameForUp ? gateIn : SharedActivations.convert(parallel, ups, inputs, scratch);
            // [0, jobs): each network's hidden rows; [jobs, 2·jobs): each network's output rows
            int[] rowsOf = new int[2 * jobs];
            for (int j = 0; j < jobs; j++) {
                rowsOf[j] = nets[j].hidden();
                rowsOf[jobs + j] = nets[j].down().rows();
            }
            this.rows = new RowSplitter(rowsOf);
        }

        /** Hidden rows of every network, then output rows of every network, end to end. */
        public int rows() {
            return rows.total();
        }

        /** Rows per chunk boundary ({@link RowSplitter#grain()}). */
        public int grain() {
            return rows.grain();
        }

        /** Computes rows {@code [from, to)} of {@link #rows()}. */
        public void run(int from, int to) {
            rows.run(from, to, (s, start, end) -> {
                if (s < jobs) {
                    hiddenRows(s, start, end);
                } else {
                    outputRows(s - jobs, start, end);
                }
            });
        }

        /**
         * Every row in a pool call of its own, then {@link #finish}: a pass that no caller's pool call runs. A row that
         * fails gives the working buffers back and throws; {@link #then} is then never applied.
         */
        public float[][][] complete() {
            return complete(null);
        }

        /** {@link #complete()} with {@code meanwhile} (or null) run by the calling thread as the rows start. */
        public float[][][] complete(Runnable meanwhile) {
            try {
                if (meanwhile != null) {
                    parallel.forRange(rows(), grain(), this::run, meanwhile);
                } else if (rows() > 0) {
                    parallel.forRange(rows(), grain(), this::run);
                }
            } catch (RuntimeException | Error e) {
                release();
                throw e;
            }
            return finish();
        }

        /** {@code result[j][t]}, once every row has run; the working buffers go back. */
        public float[][][] finish() {
            release();
            return then == null ? out : then.apply(out);
        }

        /**
         * This pass with {@link #finish} returning {@code then} of its results (an executor's own completion: the
         * tiered experts' device results merged in, their checkout released); applied once, after the rows.
         */
        public Pass then(UnaryOperator<float[][][]> then) {
            this.then = then;
            return this;
        }

        void release() {
            SCRATCH.give(scratch);
        }

        private void hiddenRows(int j, int from, int to) {
            try {
                nets[j].gate().matmul(gateIn[j], gate[j], from, to);
                nets[j].up().matmul(upIn[j], up[j], from, to);
                int n = nets[j].hidden();
                Glu glu = nets[j].glu();
                for (int t = 0; t < inputs[j].length; t++) {
                    for (int r = from; r < to; r++) {
                        hidden[j][t][r] = glu.hidden(gate[j][t][r], up[j][t][r], r, n);
                    }
                }
                if (pendingHidden.addAndGet(j, from - to) == 0) {
                    Activation.convertAll(parallel, hidden[j], nets[j].down().cols(), downIn[j]);
                    // the outputs are made here, inside the pass, not where it begins: a prompt's (8 MB for the bench
                    // model's) were a serial allocation before every block's experts
                    out[j] = new float[inputs[j].length][nets[j].down().rows()];
                    ready[j].open();
                }
            } catch (RuntimeException | Error e) {
                failed = true;
                for (Signal r : ready) {
                    r.open();
                }
                throw e;
            }
        }

        private void outputRows(int j, int from, int to) {
            // the hidden rows of j were all claimed before any output row, by threads that are computing them now
            ready[j].await();
            if (failed) {
                return; // the failure reaches the caller through the pool
            }
            nets[j].down().matmul(downIn[j], out[j], from, to);
            for (float[] o : out[j]) {
                nets[j].glu().addDownBias(o, from, to);
            }
        }
    }
}
