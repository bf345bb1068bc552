package dev.lazarus.kt.fidelity;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

import dev.lazarus.kt.gguf.GgufFile;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;

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
        String path = props().path("model_path").asString("");
        return path.isEmpty() ? Optional.empty() : Optional.of(path);
    }

    /** What the server reports of itself in {@code /props}. */
    public JsonNode props() {
        return JSON.readTree(send(HttpRequest.newBuilder(base.resolve("props")).timeout(Duration.ofSeconds(30)).GET().build()));
    }

    @Override
    public OracleContinuation greedy(int[] prompt, int tokens, int topLogprobs) {
        HttpRequest request = HttpRequest.newBuilder(base.resolve("completion")).timeout(timeout)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(requestBody(prompt, tokens, topLogprobs))).build();
        return parse(send(request), this::pieces);
    }

    /** The bytes of each token as llama-server detokenizes it ({@code /tokenize} of token ids, with pieces). */
    List<byte[]> pieces(int[] tokens) {
        ObjectNode body = JSON.createObjectNode();
        ArrayNode ids = body.putArray("content");
        Arrays.stream(tokens).forEach(ids::add);
        body.put("add_special", false).put("with_pieces", true);
        HttpRequest request = HttpRequest.newBuilder(base.resolve("tokenize")).timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body))).build();
        List<byte[]> pieces = parsePieces(tokens, send(request));
        Set<Integer> control = controlTokens();
        for (int i = 0; i < tokens.length; i++) {
            if (control.contains(tokens[i])) {
                pieces.set(i, new byte[0]);
            }
        }
        return pieces;
    }

    /**
     * The model's control tokens ({@code tokenizer.ggml.token_type} 3): {@code /tokenize} shows their text, but a
     * generation writes none (llama-server detokenizes it without special tokens), so one after a cut-off UTF-8 lead
     * byte is held back with it. Empty when the server names no model file this process can read.
     */
    private Set<Integer> controlTokens() {
        Path model = modelPath().map(Path::of).filter(Files::isRegularFile).orElse(null);
        if (model == null) {
            return Set.of();
        }
        try (GgufFile file = GgufFile.open(model)) {
            if (!file.metadata().containsKey("tokenizer.ggml.token_type")) {
                return Set.of();
            }
            List<Object> types = file.array("tokenizer.ggml.token_type");
            Set<Integer> control = new TreeSet<>();
            for (int id = 0; id < types.size(); id++) {
                if (types.get(id) instanceof Number n && n.intValue() == 3) {
                    control.add(id);
                }
            }
            return control;
        }
    }

    /** A piece is a string where it is valid UTF-8 and an array of its bytes where not. */
    static List<byte[]> parsePieces(int[] tokens, String body) {
        JsonNode answer = JSON.readTree(body).path("tokens");
        List<byte[]> pieces = new ArrayList<>(tokens.length);
        for (JsonNode t : answer) {
            JsonNode piece = t.path("piece");
            if (piece.isString()) {
                pieces.add(piece.asString().getBytes(StandardCharsets.UTF_8));
            } else {
                byte[] bytes = new byte[piece.size()];
                for (int i = 0; i < bytes.length; i++) {
                    bytes[i] = (byte) piece.get(i).asInt();
                }
                pieces.add(bytes);
            }
        }
        int[] ids = answer.valueStream().mapToInt(t -> t.path("id").asInt()).toArray();
        if (!Arrays.equals(ids, tokens)) {
            throw new OracleException("llama-server's /tokenize of " + Arrays.toString(tokens) + " answered "
                    + abbreviate(body));
        }
        return pieces;
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

    /**
     * The continuation in a {@code /completion} response; {@code pieces} gives the tokens' bytes, asked only when
     * llama-server held some tokens' text back (see {@link #alignTopLogprobs}).
     */
    static OracleContinuation parse(String body, Function<int[], List<byte[]>> pieces) {
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
        JsonNode probabilities = response.path("completion_probabilities");
        List<List<TokenLogprob>> top = probabilities.size() == tokens.length
                ? alignTopLogprobs(tokens, null, probabilities)
                : alignTopLogprobs(tokens, pieces.apply(tokens), probabilities);
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
     * The top candidates of each generated token, null where llama-server reported none. It sends an entry of
     * {@code completion_probabilities} only for a token after which its text is not held back ({@link HeldBackText}),
     * with that token's id and probabilities; a held-back token has none. Which tokens those are follows from the
     * tokens' bytes ({@code pieces}), not from the ids: matching entries to tokens by id puts a step's probabilities
     * on an earlier step wherever a held-back token has the same id as the one that releases the text (a byte token
     * {@code <0xE5>}, then "i" "i": the second "i" sends the entry, the first matches it by id). {@code pieces} may
     * be null when every token has an entry.
     */
    static List<List<TokenLogprob>> alignTopLogprobs(int[] tokens, List<byte[]> pieces, JsonNode probabilities) {
        List<List<TokenLogprob>> top = new ArrayList<>(tokens.length);
        HeldBackText text = new HeldBackText();
        int next = 0;
        for (int step = 0; step < tokens.length; step++) {
            if (pieces != null) {
                text.append(pieces.get(step));
                if (text.heldBack()) {
                    top.add(null);
                    continue;
                }
            }
            JsonNode entry = next < probabilities.size() ? probabilities.get(next) : null;
            if (entry == null || entry.path("id").asInt() != tokens[step]) {
                throw new OracleException("completion_probabilities do not follow the tokens "
                        + Arrays.toString(tokens) + " at step " + step + ": " + abbreviate(probabilities.toString()));
            }
            next++;
            List<TokenLogprob> candidates = new ArrayList<>();
            for (JsonNode c : entry.path("top_logprobs")) {
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
