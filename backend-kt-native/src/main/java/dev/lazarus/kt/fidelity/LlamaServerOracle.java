package dev.lazarus.kt.fidelity;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * A running llama-server as the {@link Oracle}, over its native {@code /completion} endpoint: the prompt goes as
 * token ids (so tokenization is not part of the comparison), greedy through the top-k sampler alone (no penalties,
 * no DRY), end-of-generation tokens banned ({@code ignore_eos}), no prompt cache. {@code n_probs} with
 * {@code post_sampling_probs: false} reports the raw softmax of the logits, before the sampler chain.
 */
public final class LlamaServerOracle implements Oracle {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    /** Generation on a large model on a CPU can take minutes per prompt. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(30);

    private final URI base;
    private final Duration timeout;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    public LlamaServerOracle(URI base) {
        this(base, DEFAULT_TIMEOUT);
    }

    public LlamaServerOracle(URI base, Duration timeout) {
        String url = base.toString();
        this.base = URI.create(url.endsWith("/") ? url : url + "/");
        this.timeout = timeout;
    }

    @Override
    public String describe() {
        String url = base.toString();
        return url.substring(0, url.length() - 1);
    }

    /** Fails with the reason unless llama-server answers {@code /health} with 200 (loaded and ready). */
    public void requireHealthy() {
        send(HttpRequest.newBuilder(base.resolve("health")).timeout(Duration.ofSeconds(30)).GET().build());
    }

    /** The model file the server reports in {@code /props}, when it reports one. */
    public Optional<String> modelPath() {
        String props = send(HttpRequest.newBuilder(base.resolve("props")).timeout(Duration.ofSeconds(30)).GET().build());
        String path = JSON.readTree(props).path("model_path").asString("");
        return path.isEmpty() ? Optional.empty() : Optional.of(path);
    }

    @Override
    public OracleContinuation greedy(int[] prompt, int tokens, int topLogprobs) {
        HttpRequest request = HttpRequest.newBuilder(base.resolve("completion")).timeout(timeout)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(requestBody(prompt, tokens, topLogprobs))).build();
        return parse(send(request));
    }

    static String requestBody(int[] prompt, int tokens, int topLogprobs) {
        ObjectNode request = JSON.createObjectNode();
        ArrayNode ids = request.putArray("prompt");
        Arrays.stream(prompt).forEach(ids::add);
        request.put("n_predict", tokens)
                .put("temperature", 0)
                .put("top_k", 1)
                .put("ignore_eos", true)
                .put("cache_prompt", false)
                .put("return_tokens", true)
                .put("n_probs", topLogprobs)
                .put("post_sampling_probs", false);
        request.putArray("samplers").add("top_k");
        return JSON.writeValueAsString(request);
    }

    /** The continuation in a {@code /completion} response. */
    static OracleContinuation parse(String body) {
        JsonNode response;
        try {
            response = JSON.readTree(body);
        } catch (JacksonException e) {
            throw new OracleException("llama-server's /completion answer is not JSON: " + abbreviate(body), e);
        }
        if (!response.path("tokens").isArray()) {
            throw new OracleException("llama-server's /completion answer has no \"tokens\" (a llama-server without "
                    + "return_tokens support?): " + abbreviate(body));
        }
        int[] tokens = response.path("tokens").valueStream().mapToInt(JsonNode::asInt).toArray();
        List<List<TokenLogprob>> top = alignTopLogprobs(tokens, response.path("completion_probabilities"));
        // ignore_eos is a logit bias of -inf (serialised as null) on every end-of-generation token.
        Set<Integer> banned = new TreeSet<>();
        for (JsonNode bias : response.path("generation_settings").path("logit_bias")) {
            if (bias.path("bias").isNull()) {
                banned.add(bias.path("token").asInt());
            }
        }
        return new OracleContinuation(tokens, top, banned);
    }

    /**
     * The top candidates of each generated token, null where llama-server reported none. It keeps probabilities
     * only for tokens that complete a UTF-8 character (a token holding the first bytes of one is left out of
     * {@code completion_probabilities}), so the entries are matched to the tokens by their chosen id, in order.
     */
    static List<List<TokenLogprob>> alignTopLogprobs(int[] tokens, JsonNode probabilities) {
        List<List<TokenLogprob>> top = new ArrayList<>(tokens.length);
        int next = 0;
        for (int token : tokens) {
            JsonNode step = next < probabilities.size() ? probabilities.get(next) : null;
            if (step == null || step.path("id").asInt() != token) {
                top.add(null);
                continue;
            }
            next++;
            List<TokenLogprob> candidates = new ArrayList<>();
            for (JsonNode c : step.path("top_logprobs")) {
                // a probability of 0 has logprob -inf, which JSON cannot carry: llama-server writes null
                double logprob = c.path("logprob").isNumber() ? c.path("logprob").asDouble() : Double.NEGATIVE_INFINITY;
                candidates.add(new TokenLogprob(c.path("id").asInt(), logprob));
            }
            top.add(List.copyOf(candidates));
        }
        if (next != probabilities.size()) {
            throw new OracleException("completion_probabilities do not follow the tokens " + Arrays.toString(tokens)
                    + ": " + abbreviate(probabilities.toString()));
        }
        return top;
    }

    private String send(HttpRequest request) {
        try {
            HttpResponse<String> r = http.send(request, HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() / 100 != 2) {
                throw new OracleException("%s %s -> HTTP %d %s".formatted(request.method(), request.uri(),
                        r.statusCode(), abbreviate(r.body())));
            }
            return r.body();
        } catch (IOException e) {
            throw new OracleException("%s %s failed: %s (is llama-server running there?)"
                    .formatted(request.method(), request.uri(), e), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new OracleException("interrupted while waiting for " + request.uri(), e);
        }
    }

    private static String abbreviate(String s) {
        return s.length() <= 500 ? s : s.substring(0, 500) + "…";
    }

    /** The oracle could not be asked, or answered something unusable. */
    public static final class OracleException extends RuntimeException {
        public OracleException(String message) {
            super(message);
        }

        public OracleException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
