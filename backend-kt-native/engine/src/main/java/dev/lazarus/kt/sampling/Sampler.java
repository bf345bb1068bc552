package dev.lazarus.kt.sampling;

import dev.lazarus.kt.grammar.GrammarMatcher;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Picks the next token from the logits, in llama.cpp's default order: logit bias → repeat /
 * frequency / presence penalties over the last tokens ({@link Penalties}) → top-k → top-p → min-p →
 * temperature → random draw (or the most likely token when greedy). One per sequence: it owns the
 * sequence's random stream and penalty window, so a fixed seed replays the same choices. Not
 * thread-safe.
 *
 * <p>Under a grammar it chooses as llama.cpp's common sampler does: the token chosen without the grammar is kept
 * when the grammar allows it (the common case costs one check); otherwise the tokens the grammar refuses are
 * masked and the choice is made again. Greedy decoding so takes the best token the grammar allows.
 */
public final class Sampler implements TokenSampler {

    /** A sampled token and, when the request asked for them, its log-probabilities. */
    public record Sampled(int token, TokenLogprobs logprobs) {}

    private final SamplingParams params;
    private final int vocabSize;
    private final SplittableRandom random;
    private final PenaltyWindow window; // null when no penalty is active
    private final GrammarMatcher grammar; // null when the output is free
    // candidate buffers reused across steps
    private final int[] ids;
    private final float[] values;

    /** @param contextSize positions of the sequence: the penalty window when {@code repeat_last_n} is -1 */
    public Sampler(SamplingParams params, int vocabSize, int contextSize) {
        this(params, vocabSize, contextSize, null);
    }

    /** @param grammar the grammar the chosen tokens must follow (this sampler moves it along), or null */
    public Sampler(SamplingParams params, int vocabSize, int contextSize, GrammarMatcher grammar) {
        this.params = params;
        this.grammar = grammar;
        this.vocabSize = vocabSize;
        this.random = new SplittableRandom(params.seed());
        this.window = params.penalties().active()
                ? new PenaltyWindow(params.penalties().window(contextSize), vocabSize) : null;
        this.ids = new int[vocabSize];
        this.values = new float[vocabSize];
    }

    /**
     * Samples the next token and, if requested, reports log-probabilities of the raw logits. The
     * token does not join the penalty window until it is {@linkplain #accept accepted}.
     *
     * @param logits the model output for the position; modified
     */
    @Override
    public Sampled next(float[] logits) {
        float[] raw = params.logprobs() ? logits.clone() : null;
        int token = grammar == null ? sample(logits) : sampleConstrained(logits);
        if (grammar != null) {
            grammar.accept(token);
        }
        return new Sampled(token, raw == null ? null : logprobs(raw, token, params.topLogprobs()));
    }

    @Override
    public void accept(int token) {
        if (window != null) {
            window.add(token);
        }
    }

    /** The next token; {@code logits} are modified. */
    public int sample(float[] logits) {
        adjust(logits);
        return choose(logits);
    }

    /** How many of the best tokens greedy decoding checks one by one before it builds the grammar's mask. */
    private static final int GREEDY_CANDIDATES = 32;

    /** The next token the grammar allows; {@code logits} are modified. */
    private int sampleConstrained(float[] logits) {
        adjust(logits);
        if (params.isGreedy()) {
            // the best allowed token, as masking and taking the argmax would give: mostly the argmax itself
            int best = argmax(logits);
            if (grammar.allows(best)) {
                return best;
            }
            if (!grammar.maskKnown()) {
                // a state not met before: the next few best tokens may spare building its mask
                for (long candidate : BestTokens.of(logits, GREEDY_CANDIDATES)) {
                    int id = BestTokens.id(candidate);
                    if (grammar.allows(id)) {
                        return id;
                    }
                }
            }
            return grammar.bestAllowed(logits);
        }
        int token = choose(logits); // reads the logits, leaves them as they are
        if (grammar.allows(token)) {
            return token;
        }
        grammar.mask(logits);
        return choose(logits);
    }

    /** Logit bias, then the penalties: what every choice starts from. */
    private void adjust(float[] logits) {
        if (logits.length != vocabSize) {
            throw new IllegalArgumentException("expected " + vocabSize + " logits, got " + logits.length);
        }
        for (Map.Entry<Integer, Float> bias : params.logitBias().entrySet()) {
            if (bias.getKey() < vocabSize) {
                logits[bias.getKey()] += bias.getValue();
            }
        }
        if (window != null) {
            window.apply(logits, params.penalties());
        }
    }

    private int choose(float[] logits) {
        if (params.isGreedy()) {
            return argmax(logits);
        }
        int n = topK(logits, params.topK());
        n = topP(n, params.topP());
        n = minP(n, params.minP());
        return draw(n, params.temperature());
    }

    /** The greedy choice: the first of the highest logits (llama.cpp's greedy sampler picks the same). */
    public static int argmax(float[] logits) {
        int best = 0;
        for (int i = 1; i < logits.length; i++) {
            if (logits[i] > logits[best]) {
                best = i;
            }
        }
        return best;
    }

    /** Fills the candidate buffers with the k best tokens (all when k is 0), sorted by logit, best first. */
    private int topK(float[] logits, int k) {
        long[] best = BestTokens.of(logits, k <= 0 ? vocabSize : k);
        for (int i = 0; i < best.length; i++) {
            int id = BestTokens.id(best[i]);
            ids[i] = id;
            values[i] = logits[id];
        }
        return best.length;
    }

    /** Keeps the smallest prefix whose probability reaches p (at least one token). */
    private int topP(int n, float p) {
        if (p >= 1f || n <= 1) {
            return n;
        }
        double[] probs = softmax(n, 1f);
        double cumulative = 0;
        for (int i = 0; i < n; i++) {
            cumulative += probs[i];
            if (cumulative >= p) {
                return i + 1;
            }
        }
        return n;
    }

    /** Keeps tokens at least {@code minP} times as likely as the best one. */
    private int minP(int n, float minP) {
        if (minP <= 0f || n <= 1) {
            return n;
        }
        float threshold = values[0] + (float) Math.log(minP);
        int kept = 1;
        while (kept < n && values[kept] >= threshold) {
            kept++;
        }
        return kept;
    }

    private int draw(int n, float temperature) {
        double[] probs = softmax(n, temperature);
        double r = random.nextDouble();
        double cumulative = 0;
        for (int i = 0; i < n; i++) {
            cumulative += probs[i];
            if (r < cumulative) {
                return ids[i];
            }
        }
        return ids[n - 1];
    }

    private double[] softmax(int n, float temperature) {
        double[] probs = new double[n];
        double max = values[0] / temperature;
        double sum = 0;
        for (int i = 0; i < n; i++) {
            probs[i] = Math.exp(values[i] / temperature - max);
            sum += probs[i];
        }
        for (int i = 0; i < n; i++) {
            probs[i] /= sum;
        }
        return probs;
    }

    /**
     * Log-softmax of raw logits for the chosen token and the {@code top} most likely tokens
     * (ties: lower id first). Uses the logits as given: pass them before sampling modifies them.
     */
    public static TokenLogprobs logprobs(float[] rawLogits, int chosen, int top) {
        double max = Double.NEGATIVE_INFINITY;
        for (float v : rawLogits) {
            max = Math.max(max, v);
        }
        double sum = 0;
        for (float v : rawLogits) {
            sum += Math.exp(v - max);
        }
        double logZ = max + Math.log(sum);
        List<TokenLogprobs.Alternative> alternatives = new ArrayList<>(top);
        if (top > 0) {
            for (long best : BestTokens.of(rawLogits, top)) {
                int id = BestTokens.id(best);
                alternatives.add(new TokenLogprobs.Alternative(id, (float) (rawLogits[id] - logZ)));
            }
        }
        return new TokenLogprobs(chosen, (float) (rawLogits[chosen] - logZ), List.copyOf(alternatives));
    }
}
