package dev.lazarus.kt.speculative;

import dev.lazarus.kt.model.KvCache;
import dev.lazarus.kt.model.MtpBlock;
import dev.lazarus.kt.sampling.Sampler;
import java.util.Arrays;

/**
 * Drafting with the model's own NextN block, llama-server's {@code draft-mtp}: the block follows every token the main
 * model computes (each paired with the main model's hidden state of the position before it) in a cache of its own,
 * then drafts greedily from the chosen token and the hidden state of the position before it, each further draft token
 * paired with the block's own hidden state of the step before.
 */
public final class MtpDrafter implements Drafter {

    private final MtpBlock block;
    private final int contextSize;
    private final DraftLength draftLength;

    public MtpDrafter(MtpBlock block, int contextSize, DraftLength draftLength) {
        this.block = block;
        this.contextSize = contextSize;
        this.draftLength = draftLength;
    }

    @Override
    public Session open() {
        return new Follower();
    }

    @Override
    public int maxDraft() {
        return draftLength.max();
    }

    @Override
    public int minDraft() {
        return draftLength.min();
    }

    @Override
    public boolean wantsHiddenStates() {
        return true;
    }

    @Override
    public String type() {
        return "draft-mtp";
    }

    /** The block's view of one sequence: its cache and the main model's hidden states of the last pass. */
    private final class Follower implements Session {

        private final KvCache cache = block.newCache(contextSize);
        /** The main model's hidden states of the positions it computed last, from {@link #lastFrom} on. */
        private float[][] last = new float[0][];
        private int lastFrom;

        /** The main model's hidden state at {@code position} where its last pass computed it, else null. */
        private float[] hiddenAt(int position) {
            int i = position - lastFrom;
            return i >= 0 && i < last.length ? last[i] : null;
        }

        @Override
        public void computed(int[] tokens, int[] positions, float[][] states, int from, int to) {
            if (states[from] == null) {
                return; // the main model computed them without hidden states (a GPU layer path)
            }
            int n = to - from;
            int first = positions[from];
            float[][] paired = new float[n][];
            for (int i = 0; i < n; i++) {
                // each token with the hidden state that predicted it; zeros where none (the first position)
                paired[i] = i > 0 ? states[from + i - 1] : hiddenAt(first - 1);
                if (paired[i] == null) {
                    paired[i] = new float[states[from].length];
                }
            }
            last = Arrays.copyOfRange(states, from, to);
            lastFrom = first;
            block.step(Arrays.copyOfRange(tokens, from, to), paired, Arrays.copyOfRange(positions, from, to), cache,
                    new boolean[n]);
        }

        @Override
        public int[] propose(int[] tokens, int length, int max) {
            // the chosen token, paired with the main model's hidden state of the last accepted position
            int position = length - 1;
            float[] h = hiddenAt(position - 1);
            if (h == null) {
                return new int[0];
            }
            int token = tokens[position];
            int[] out = new int[max];
            for (int i = 0; i < max; i++) {
                MtpBlock.Output step = block.step(new int[] {token}, new float[][] {h}, new int[] {position + i},
                        cache, new boolean[] {true});
                token = Sampler.argmax(step.logits()[0]);
                out[i] = token;
                h = step.hidden()[0];
            }
            return out;
        }
    }
}
