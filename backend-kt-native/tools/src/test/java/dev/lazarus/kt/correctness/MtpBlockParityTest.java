package dev.lazarus.kt.correctness;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.correctness.ParityModels.Format;
import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.model.ForwardBatch;
import dev.lazarus.kt.model.KvCache;
import dev.lazarus.kt.model.Model;
import dev.lazarus.kt.model.MtpBlock;
import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.testsupport.LlamaCpp;
import dev.lazarus.kt.tokenizer.Tokenizer;
import dev.lazarus.kt.tokenizer.Tokenizers;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The glm4moe NextN block computed as llama-server's {@code draft-mtp} computes it: the first draft of a request (three
 * tokens, each from the block's own hidden state and the token drafted before) and the probabilities of each step's
 * three best candidates, which llama-server logs at {@code -v}, against the engine's {@link MtpBlock} fed the main
 * model's hidden states of the prompt. Fails if the pairing of tokens and hidden states, a norm, the projection, the
 * block or the head differs.
 */
@Tag("llama-server")
class MtpBlockParityTest {

    private static final Pattern CANDIDATE = Pattern.compile(
            "draft candidate +(\\d+), pos +(\\d+): +(\\d+) \\( *([0-9.]+)\\)");

    /** The candidates llama-server's {@code draft-mtp} sampler keeps. */
    private static final int DRAFT_TOP_K = 10;

    @TempDir
    Path dir;

    @Test
    void firstDraftAndItsCandidatesAreLlamaServers() throws Exception {
        LlamaCpp.require();
        Path glm = ParityModels.GLM4MOE.write(Format.F32, dir);
        try (GgufFile file = GgufFile.open(glm); Parallel parallel = Parallel.ofThreads(1);
             LlamaReference server = LlamaReference.start(glm, "--spec-type", "draft-mtp", "-v")) {
            Tokenizer tokenizer = Tokenizers.fromMetadata(file.metadata());
            int[] prompt = tokenizer.encode("one two three four five, one two three four five, one two", true, false);
            ObjectNode request = LlamaReference.JSON.createObjectNode();
            var ids = request.putArray("prompt");
            Arrays.stream(prompt).forEach(ids::add);
            request.put("n_predict", 4).put("temperature", 0.0).put("ignore_eos", true).put("cache_prompt", false)
                    .put("return_tokens", true);
            JsonNode response = LlamaReference.JSON.readTree(server.server().post("/completion",
                    LlamaReference.JSON.writeValueAsString(request)));
            int first = response.path("tokens").get(0).asInt();
            List<double[]> theirs = firstDraft(server.server().log());
            assertThat(theirs).as("llama-server's logged candidates of the first draft").hasSize(9);

            Model model = Model.load(file, parallel);
            MtpBlock mtp = model.mtp();
            assertThat(mtp).as("the NextN block").isNotNull();
            int n = prompt.length;
            float[][] hidden = model.hiddenStates(batch(prompt, 0, model.newCache(64)));
            KvCache cache = mtp.newCache(64);
            // the prompt: each token with the hidden state of the position before it (zeros for the first)
            float[][] shifted = new float[n][];
            shifted[0] = new float[hidden[0].length];
            System.arraycopy(hidden, 0, shifted, 1, n - 1);
            mtp.step(prompt, shifted, positions(0, n), cache, new boolean[n]);
            // the draft: the chosen token with the prompt's last hidden state, then each draft with the block's own
            List<double[]> ours = new ArrayList<>();
            int token = first;
            float[] h = hidden[n - 1];
            for (int step = 0; step < 3; step++) {
                MtpBlock.Output out = mtp.step(new int[] {token}, new float[][] {h}, positions(n + step, 1), cache,
                        new boolean[] {true});
                double[] p = softmax(out.logits()[0]);
                Integer[] order = new Integer[p.length];
                Arrays.setAll(order, i -> i);
                Arrays.sort(order, (a, b) -> Double.compare(p[b], p[a]));
                // llama-server's draft sampler keeps the ten best (its top-k) and renormalises over them
                double top = 0;
                for (int k = 0; k < DRAFT_TOP_K; k++) {
                    top += p[order[k]];
                }
                for (int k = 0; k < 3; k++) {
                    ours.add(new double[] {k, step, order[k], p[order[k]] / top});
                }
                token = order[0];
                h = out.hidden()[0];
            }
            List<String> failures = new ArrayList<>();
            for (int i = 0; i < 9; i++) {
                double[] a = ours.get(i);
                double[] b = theirs.get(i);
                if (a[2] != b[2] || Math.abs(a[3] - b[3]) > 2e-3) {
                    failures.add("step %d candidate %d: engine %d (%.3f), llama-server %d (%.3f)".formatted(
                            (int) a[1], (int) a[0], (int) a[2], a[3], (int) b[2], b[3]));
                }
            }
            assertThat(failures).as("the NextN block's draft against llama-server's").isEmpty();
        }
    }

    /** The first draft call's logged candidates: {candidate, pos, token, probability}, in log order. */
    private static List<double[]> firstDraft(String log) {
        List<double[]> out = new ArrayList<>();
        Matcher m = CANDIDATE.matcher(log);
        while (m.find() && out.size() < 9) {
            out.add(new double[] {Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)),
                    Integer.parseInt(m.group(3)), Double.parseDouble(m.group(4))});
        }
        return out;
    }

    private static ForwardBatch batch(int[] tokens, int from, KvCache cache) {
        KvCache[] caches = new KvCache[tokens.length];
        Arrays.fill(caches, cache);
        boolean[] want = new boolean[tokens.length];
        Arrays.fill(want, true);
        cache.ensureCapacity(from + tokens.length);
        return new ForwardBatch(tokens, positions(from, tokens.length), caches, want);
    }

    private static int[] positions(int from, int n) {
        int[] p = new int[n];
        Arrays.setAll(p, i -> from + i);
        return p;
    }

    private static double[] softmax(float[] logits) {
        double max = Double.NEGATIVE_INFINITY;
        for (float l : logits) {
            max = Math.max(max, l);
        }
        double sum = 0;
        double[] p = new double[logits.length];
        for (int i = 0; i < logits.length; i++) {
            p[i] = Math.exp(logits[i] - max);
            sum += p[i];
        }
        for (int i = 0; i < p.length; i++) {
            p[i] /= sum;
        }
        return p;
    }
}
