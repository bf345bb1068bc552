package dev.lazarus.kt.sampling;

import java.util.List;

/**
 * The log-probability of a chosen token and of the most likely alternatives, computed as OpenAI
 * does: log-softmax of the model's raw logits, before logit bias, penalties, temperature and
 * truncation (so they do not change with the sampling settings).
 */
public record TokenLogprobs(int token, float logprob, List<Alternative> top) {

    public record Alternative(int token, float logprob) {}
}
