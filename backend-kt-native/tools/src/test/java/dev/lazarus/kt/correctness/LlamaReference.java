package dev.lazarus.kt.correctness;

import dev.lazarus.kt.correctness.Continuation.Candidate;
import dev.lazarus.kt.fidelity.LlamaServerOracle;
import dev.lazarus.kt.fidelity.OracleContinuation;
import dev.lazarus.kt.fidelity.TokenLogprob;
import dev.lazarus.kt.testsupport.GgmlCpuVariant;
import dev.lazarus.kt.testsupport.LlamaServerProcess;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * llama-server as the reference for greedy continuations. Started with {@code -fa off} unless an
 * {@link AttentionMode} says otherwise (the engine rounds attention in either order) and the default F16 KV cache,
 * one thread (the tiny models
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
        return start(variant, AttentionMode.OFF, model, extra);
    }

    /** With ggml held to {@code variant} and flash attention as {@code mode} says. */
    static LlamaReference start(GgmlCpuVariant variant, AttentionMode mode, Path model, String... extra) {
        List<String> args = new ArrayList<>(List.of("-t", "1", "-c", "1024", "-fa", mode.flag(), "--no-warmup"));
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
     * prompt cache, {@code n_probs} reporting the raw softmax before the sampler chain: the fidelity metric's
     * oracle request ({@link LlamaServerOracle}), in this package's types.
     */
    Result greedy(int[] prompt, int n, int nProbs) {
        OracleContinuation c = new LlamaServerOracle(server.url()).greedy(prompt, n, nProbs);
        List<List<Candidate>> top = new ArrayList<>(c.top().size());
        for (List<TokenLogprob> step : c.top()) {
            top.add(step == null ? null : step.stream().map(t -> new Candidate(t.id(), t.logprob())).toList());
        }
        return new Result(new Continuation(c.tokens(), top, null), new TreeSet<>(c.banned()));
    }

    @Override
    public void close() {
        server.close();
    }
}
