package dev.lazarus.kt.sampling;

import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.CompletionRequest;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * How one request samples. Unset values take llama-server's defaults (temperature 0.8, top_k 40,
 * top_p 0.95, min_p 0.05), so a request without sampling fields behaves as it would there.
 *
 * @param temperature      0 means greedy (always the most likely token)
 * @param topK             0 disables
 * @param topP             1 disables
 * @param minP             0 disables
 * @param seed             the random seed; the same seed, logits and history give the same tokens
 * @param penalties        repeat / frequency / presence penalties and the window they look at
 * @param logitBias        token id → value added to its logit before anything else
 * @param logprobs         whether to report the chosen token's log-probability
 * @param topLogprobs      how many alternatives to report with it (0-20)
 * @param maxTokens        completion length limit; -1 for none (the context size limits)
 * @param stop             strings that end the completion and are not part of it
 */
public record SamplingParams(
        float temperature,
        int topK,
        float topP,
        float minP,
        long seed,
        Penalties penalties,
        Map<Integer, Float> logitBias,
        boolean logprobs,
        int topLogprobs,
        int maxTokens,
        List<String> stop) {

    public static final float DEFAULT_TEMPERATURE = 0.8f;
    public static final int DEFAULT_TOP_K = 40;
    public static final float DEFAULT_TOP_P = 0.95f;
    public static final float DEFAULT_MIN_P = 0.05f;
    /** OpenAI's limit on {@code stop} entries. */
    public static final int MAX_STOP_STRINGS = 4;

    public SamplingParams {
        logitBias = Map.copyOf(logitBias);
        stop = List.copyOf(stop);
    }

    /** Greedy decoding with nothing else set: what correctness tests against llama.cpp use. */
    public static SamplingParams greedy(int maxTokens) {
        return new SamplingParams(0f, DEFAULT_TOP_K, DEFAULT_TOP_P, DEFAULT_MIN_P, 0L, Penalties.NONE, Map.of(), false,
                0, maxTokens, List.of());
    }

    public boolean isGreedy() {
        return temperature <= 0f;
    }

    /**
     * The sampling of a chat request, reading llama.cpp's {@code top_k}, {@code min_p},
     * {@code repeat_penalty} and {@code repeat_last_n} (alias {@code penalty_last_n}) from its extra fields.
     */
    public static SamplingParams from(ChatCompletionRequest r) {
        if (r.n() != null && r.n() != 1) {
            throw BackendException.invalidRequest("n must be 1: this backend generates one choice per request", "n");
        }
        boolean logprobs = Boolean.TRUE.equals(r.logprobs());
        int top = r.topLogprobs() == null ? 0 : r.topLogprobs();
        if (r.topLogprobs() != null && !logprobs) {
            throw BackendException.invalidRequest("top_logprobs requires logprobs to be true", "top_logprobs");
        }
        requireRange("top_logprobs", top, 0, 20);
        Integer max = r.effectiveMaxTokens();
        String maxName = r.maxCompletionTokens() != null ? "max_completion_tokens" : "max_tokens";
        return build(r.temperature(), r.topP(), r.extra(), r.seed(), r.presencePenalty(), r.frequencyPenalty(),
                r.logitBias(), logprobs, top, max, maxName, r.stop());
    }

    /** The sampling of a legacy completion request; its {@code logprobs} is the number of alternatives (0-5). */
    public static SamplingParams from(CompletionRequest r) {
        if (r.n() != null && r.n() != 1) {
            throw BackendException.invalidRequest("n must be 1: this backend generates one choice per request", "n");
        }
        if (r.bestOf() != null && r.bestOf() != 1) {
            throw BackendException.invalidRequest("best_of must be 1", "best_of");
        }
        int top = r.logprobs() == null ? 0 : r.logprobs();
        requireRange("logprobs", top, 0, 5);
        return build(r.temperature(), r.topP(), r.extra(), r.seed(), r.presencePenalty(), r.frequencyPenalty(),
                r.logitBias(), r.logprobs() != null, top, r.maxTokens(), "max_tokens", r.stop());
    }

    private static SamplingParams build(Double temperature, Double topP, Map<String, Object> extra, Long seed,
            Double presence, Double frequency, Map<String, Double> bias, boolean logprobs, int topLogprobs,
            Integer maxTokens, String maxName, List<String> stop) {
        float temp = (float) requireRange("temperature", temperature, 0, 2, DEFAULT_TEMPERATURE);
        float p = (float) requireRange("top_p", topP, 0, 1, DEFAULT_TOP_P);
        if (topP != null && topP <= 0) {
            throw BackendException.invalidRequest("top_p must be greater than 0 and at most 1", "top_p");
        }
        int k = (int) requireRange("top_k", number(extra, "top_k"), 0, Integer.MAX_VALUE, DEFAULT_TOP_K);
        float minP = (float) requireRange("min_p", number(extra, "min_p"), 0, 1, DEFAULT_MIN_P);
        Penalties penalties = penalties(extra, presence, frequency);
        if (maxTokens != null && maxTokens < 1) {
            throw BackendException.invalidRequest(maxName + " must be at least 1", maxName);
        }
        List<String> stops = stop == null ? List.of() : stop;
        if (stops.size() > MAX_STOP_STRINGS) {
            throw BackendException.invalidRequest("stop may hold at most " + MAX_STOP_STRINGS + " strings", "stop");
        }
        if (stops.stream().anyMatch(s -> s == null || s.isEmpty())) {
            throw BackendException.invalidRequest("stop strings must not be empty", "stop");
        }
        long s = seed != null ? seed : ThreadLocalRandom.current().nextLong();
        return new SamplingParams(temp, k, p, minP, s, penalties, logitBias(bias), logprobs,
                topLogprobs, maxTokens == null ? -1 : maxTokens, stops);
    }

    private static Penalties penalties(Map<String, Object> extra, Double presence, Double frequency) {
        float presencePenalty = (float) requireRange("presence_penalty", presence, -2, 2, 0);
        float frequencyPenalty = (float) requireRange("frequency_penalty", frequency, -2, 2, 0);
        Double repeat = number(extra, "repeat_penalty");
        if (repeat != null && !(repeat > 0 && repeat <= 100)) {
            throw BackendException.invalidRequest("repeat_penalty must be greater than 0 and at most 100, got " + repeat,
                    "repeat_penalty");
        }
        String lastNName = extra != null && extra.get("repeat_last_n") == null && extra.get("penalty_last_n") != null
                ? "penalty_last_n" : "repeat_last_n";
        Double lastN = number(extra, lastNName);
        if (lastN != null && (lastN < -1 || lastN != Math.rint(lastN) || lastN > Integer.MAX_VALUE)) {
            throw BackendException.invalidRequest(lastNName + " must be a whole number of tokens, at least -1 (-1: the"
                    + " context size, 0: no penalties), got " + lastN, lastNName);
        }
        return new Penalties(lastN == null ? Penalties.DEFAULT_LAST_N : lastN.intValue(),
                repeat == null ? 1f : repeat.floatValue(), frequencyPenalty, presencePenalty);
    }

    private static Map<Integer, Float> logitBias(Map<String, Double> bias) {
        Map<Integer, Float> out = new LinkedHashMap<>();
        if (bias == null) {
            return out;
        }
        bias.forEach((key, value) -> {
            int id;
            try {
                id = Integer.parseInt(key.strip());
            } catch (NumberFormatException e) {
                throw BackendException.invalidRequest("logit_bias keys must be token ids, got '" + key + "'", "logit_bias");
            }
            if (id < 0 || value == null || value < -100 || value > 100) {
                throw BackendException.invalidRequest("logit_bias needs token ids >= 0 and values from -100 to 100",
                        "logit_bias");
            }
            out.put(id, value.floatValue());
        });
        return out;
    }

    private static Double number(Map<String, Object> extra, String key) {
        Object v = extra == null ? null : extra.get(key);
        if (v == null) {
            return null;
        }
        if (v instanceof Number n) {
            return n.doubleValue();
        }
        throw BackendException.invalidRequest(key + " must be a number", key);
    }

    private static double requireRange(String name, Double value, double min, double max, double def) {
        if (value == null) {
            return def;
        }
        if (value.isNaN() || value < min || value > max) {
            throw BackendException.invalidRequest(name + " must be between " + fmt(min) + " and " + fmt(max)
                    + ", got " + value, name);
        }
        return value;
    }

    private static void requireRange(String name, int value, int min, int max) {
        requireRange(name, (double) value, min, max, 0);
    }

    private static String fmt(double d) {
        return d == Math.rint(d) && Math.abs(d) < 1e9 ? String.valueOf((long) d) : String.valueOf(d);
    }
}
