package dev.lazarus.kt.correctness;

import dev.lazarus.kt.correctness.Continuation.Candidate;
import dev.lazarus.kt.testsupport.GgmlCpuVariant;
import dev.lazarus.kt.testsupport.LlamaServerProcess;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * llama-server as the reference for greedy continuations. Started with {@code -fa off} (the engine rounds
 * attention like llama.cpp's non-flash CPU path) and the default F16 KV cache, one thread (the tiny models
 * gain nothing from more, and a busy-waiting second thread on a shared 2-core CI runner makes each step
 * ~50x slower).
 */
final class LlamaReference implements AutoCloseable {

    static final ObjectMapper JSON = JsonMapper.builder().build();

    private final LlamaServerProcess server;

    private LlamaReference(LlamaServerProcess server) {
        this.server = server;
    }

    static LlamaReference start(Path model, String... extra) {
        return start(GgmlCpuVariant.reference(), model, extra);
    }

    /** With ggml held to {@code variant}. */
    static LlamaReference start(GgmlCpuVariant variant, Path model, String... extra) {
        List<String> args = new ArrayList<>(List.of("-t", "1", "-c", "1024", "-fa", "off", "--no-warmup"));
        args.addAll(List.of(extra));
        return new LlamaReference(LlamaServerProcess.start(variant, model, args.toArray(String[]::new)));
    }

    LlamaServerProcess server() {
        return server;
    }

    /** A greedy continuation and what llama-server banned to honour {@code ignore_eos}. */
    record Result(Continuation continuation, Set<Integer> banned) {
    }

    /**
     * {@code /completion} of the prompt given as token ids (so the comparison is not about tokenization),
     * greedy through the top-k sampler alone (no penalties, no DRY), end-of-generation tokens banned, no
     * prompt cache. {@code n_probs} with {@code post_sampling_probs: false} reports the raw softmax of the
     * logits, before the sampler chain (Debian's version computes it with {@code get_token_probabilities}).
     */
    Result greedy(int[] prompt, int n, int nProbs) {
        ObjectNode request = JSON.createObjectNode();
        ArrayNode ids = request.putArray("prompt");
        for (int id : prompt) {
            ids.add(id);
        }
        request.put("n_predict", n)
                .put("temperature", 0)
                .put("top_k", 1)
                .put("ignore_eos", true)
                .put("cache_prompt", false)
                .put("return_tokens", true)
                .put("n_probs", nProbs)
                .put("post_sampling_probs", false);
        request.putArray("samplers").add("top_k");
        JsonNode response = JSON.readTree(server.post("/completion", JSON.writeValueAsString(request)));
        int[] tokens = response.path("tokens").valueStream().mapToInt(JsonNode::asInt).toArray();
        List<List<Candidate>> top = alignProbabilities(tokens, response.path("completion_probabilities"));
        // ignore_eos is a logit bias of -inf (serialised as null) on every end-of-generation token.
        Set<Integer> banned = new TreeSet<>();
        for (JsonNode bias : response.path("generation_settings").path("logit_bias")) {
            if (bias.path("bias").isNull()) {
                banned.add(bias.path("token").asInt());
            }
        }
        return new Result(new Continuation(tokens, top, null), banned);
    }

    /**
     * The top candidates of each generated token, null where llama-server reported none. It keeps probabilities
     * only for tokens that complete a UTF-8 character (a token holding the first bytes of one is left out of
     * {@code completion_probabilities}), so the entries are matched to the tokens by their chosen id, in order.
     */
    private static List<List<Candidate>> alignProbabilities(int[] tokens, JsonNode probabilities) {
        List<List<Candidate>> top = new ArrayList<>();
        int next = 0;
        for (int token : tokens) {
            JsonNode step = next < probabilities.size() ? probabilities.get(next) : null;
            if (step == null || step.path("id").asInt() != token) {
                top.add(null);
                continue;
            }
            next++;
            List<Candidate> candidates = new ArrayList<>();
            for (JsonNode c : step.path("top_logprobs")) {
                candidates.add(new Candidate(c.path("id").asInt(), c.path("logprob").asDouble()));
            }
            top.add(candidates);
        }
        if (next != probabilities.size()) {
            throw new IllegalStateException("completion_probabilities do not follow the tokens " + Arrays.toString(tokens)
                    + ": " + probabilities);
        }
        return top;
    }

    @Override
    public void close() {
        server.close();
    }
}
