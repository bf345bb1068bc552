package dev.lazarus.kt.correctness;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.SpeculativeDecodingView.Counts;
import dev.lazarus.backend.api.openai.Completion;
import dev.lazarus.backend.api.openai.CompletionRequest;
import dev.lazarus.kt.backend.KtNativeBackend;
import dev.lazarus.kt.backend.KtNativeBackendFactory;
import dev.lazarus.kt.correctness.ParityModels.Format;
import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.testsupport.LlamaCpp;
import dev.lazarus.kt.tokenizer.Tokenizer;
import dev.lazarus.kt.tokenizer.Tokenizers;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * n-gram speculative decoding as llama-server does it: the backend with {@code spec-type: ngram-simple} against
 * llama-server with {@code --spec-type ngram-simple} and the same n-gram sizes, greedy on the generated F32 llama
 * model whose plain continuations {@link GreedyParityTest} shows identical. Equal drafts verify in batches of equal
 * sizes, which round alike, so the tokens are the same; and the draft tokens verified and accepted per request
 * (llama-server's {@code timings.draft_n}, {@code draft_n_accepted}) are the same, which holds only if both look up
 * the same n-grams and cut the drafts alike.
 */
@Tag("llama-server")
class SpeculativeParityTest {

    static final int TOKENS = 48;
    static final String SIZE_N = "3";
    static final String SIZE_M = "12";

    @TempDir
    static Path dir;

    static Path model;
    static Tokenizer tokenizer;
    static KtNativeBackend backend;
    static LlamaReference llama;

    @BeforeAll
    static void start() throws Exception {
        LlamaCpp.require();
        model = ParityModels.LLAMA.write(Format.F32, dir);
        try (GgufFile file = GgufFile.open(model)) {
            tokenizer = Tokenizers.fromMetadata(file.metadata());
        }
        backend = ((KtNativeBackend) new KtNativeBackendFactory().create(new BackendConfig("kt", "kt-native",
                Map.of("model", model.toString(), "threads", 1, "context-size", 1024, "model-name", "m",
                        "flash-attention", "off", "spec-type", "ngram-simple", "spec-ngram-simple-size-n", SIZE_N,
                        "spec-ngram-simple-size-m", SIZE_M))))
                .awaitReady(Duration.ofMinutes(1));
        llama = LlamaReference.start(model, "--spec-type", "ngram-simple", "--spec-ngram-simple-size-n", SIZE_N,
                "--spec-ngram-simple-size-m", SIZE_M);
    }

    @AfterAll
    static void stop() {
        if (backend != null) {
            backend.close();
        }
        if (llama != null) {
            llama.close();
        }
    }

    @Test
    void ngramSpeculationDraftsAcceptsAndAnswersAsLlamaServer() {
        assertThat(compare(backend, llama)).as("draft tokens accepted (else this compares plain greedy)").isPositive();
    }

    /** The model drafting for itself ({@code draft-simple}, three tokens a step) against llama-server's {@code -md}. */
    @Test
    void draftModelSpeculationAnswersAsLlamaServer() throws Exception {
        KtNativeBackend drafting = ((KtNativeBackend) new KtNativeBackendFactory().create(new BackendConfig("kt-draft",
                "kt-native", Map.of("model", model.toString(), "threads", 1, "context-size", 1024, "model-name", "m",
                        "flash-attention", "off", "spec-type", "draft-simple", "spec-draft-model", model.toString(),
                        "spec-draft-n-max", 3))))
                .awaitReady(Duration.ofMinutes(1));
        try (drafting; LlamaReference server = LlamaReference.start(model, "--spec-type", "draft-simple",
                "--spec-draft-model", model.toString(), "--spec-draft-n-max", "3")) {
            assertThat(compare(drafting, server)).as("draft tokens accepted").isPositive();
        }
    }

    /**
     * MTP drafting ({@code draft-mtp}) with the NextN block the generator writes for glm4moe, three tokens a step (both
     * defaults), against llama-server's: the same tokens, which are also kt-native's plain greedy ones, and the same
     * draft tokens verified and accepted per request, which holds only if both compute the block alike, pair it with
     * the same hidden states and cut the drafts alike.
     */
    @Test
    void mtpSpeculationAnswersAsLlamaServerAndAsPlainGreedy() throws Exception {
        Path glm = ParityModels.GLM4MOE.write(Format.F32, dir);
        Tokenizer glmTokenizer;
        try (GgufFile file = GgufFile.open(glm)) {
            glmTokenizer = Tokenizers.fromMetadata(file.metadata());
        }
        KtNativeBackend plain = glmBackend(glm, "none");
        KtNativeBackend mtp = glmBackend(glm, "draft-mtp");
        try (plain; mtp; LlamaReference server = LlamaReference.start(glm, "--spec-type", "draft-mtp")) {
            List<String> failures = new ArrayList<>();
            long drafts = 0;
            for (String text : List.of("one two three four five, one two three four five, one two",
                    "abc abc abc abc abc abc abc abc abc abc abc abc")) {
                int[] ids = glmTokenizer.encode(text, true, false);
                String greedy = ours(plain, glmTokenizer, ids);
                Counts before = mtp.speculativeDecoding().orElseThrow();
                String ours = ours(mtp, glmTokenizer, ids);
                Counts after = mtp.speculativeDecoding().orElseThrow();
                JsonNode response = theirs(server, ids);
                String theirs = glmTokenizer.decode(response.path("tokens").valueStream().mapToInt(JsonNode::asInt)
                        .toArray());
                long drafted = after.draftedTokens() - before.draftedTokens();
                long taken = after.acceptedTokens() - before.acceptedTokens();
                JsonNode timings = response.path("timings");
                if (!ours.equals(theirs) || !ours.equals(greedy) || drafted != timings.path("draft_n").asLong()
                        || taken != timings.path("draft_n_accepted").asLong()) {
                    failures.add("%s:%n  plain        %s%n  engine       %s (drafted %d, accepted %d)%n  llama-server %s (%s)"
                            .formatted(text, greedy.replace("\n", "\\n"), ours.replace("\n", "\\n"), drafted, taken,
                                    theirs.replace("\n", "\\n"), timings));
                }
                drafts += drafted;
            }
            assertThat(failures).as("MTP speculation against plain greedy and llama-server's draft-mtp").isEmpty();
            assertThat(drafts).as("draft tokens verified").isPositive();
        }
    }

    /** Several sequences drafting with the NextN block in the same passes: each answers as it does alone, greedily. */
    @Test
    void mtpSpeculationWithSeveralSequencesInABatchAnswersAsPlainGreedy() throws Exception {
        Path glm = ParityModels.GLM4MOE.write(Format.F32, dir);
        Tokenizer glmTokenizer;
        try (GgufFile file = GgufFile.open(glm)) {
            glmTokenizer = Tokenizers.fromMetadata(file.metadata());
        }
        List<int[]> prompts = List.of("one two three four five, one two", "abc abc abc abc abc abc",
                "The cat sat on the mat. The cat").stream().map(t -> glmTokenizer.encode(t, true, false)).toList();
        KtNativeBackend plain = glmBackend(glm, "none");
        KtNativeBackend mtp = glmBackend(glm, "draft-mtp");
        try (plain; mtp; var pool = java.util.concurrent.Executors.newFixedThreadPool(prompts.size())) {
            List<String> greedy = prompts.stream().map(ids -> ours(plain, glmTokenizer, ids)).toList();
            Counts before = mtp.speculativeDecoding().orElseThrow();
            List<java.util.concurrent.Future<String>> together = prompts.stream()
                    .map(ids -> pool.submit(() -> ours(mtp, glmTokenizer, ids))).toList();
            List<String> speculative = new ArrayList<>();
            for (var f : together) {
                speculative.add(f.get());
            }
            Counts after = mtp.speculativeDecoding().orElseThrow();
            assertThat(speculative).as("concurrent MTP-speculative continuations").isEqualTo(greedy);
            assertThat(after.draftedTokens() - before.draftedTokens()).as("draft tokens verified").isPositive();
        }
    }

    /**
     * Acceptance where a NextN block can earn it: {@link #predictingNextN} makes the main model's choice a function
     * of the current token and the NextN block that same function of the token it is given, so each draft should be
     * what the model then chooses. Both engines should accept (nearly) every draft, and the same ones.
     */
    @Test
    void aNextNBlockThatPredictsTheModelGetsItsDraftsAcceptedAsInLlamaServer() throws Exception {
        Path glm = predictingNextN(ParityModels.GLM4MOE.write(Format.F32, dir), dir.resolve("glm4moe-mtp-predicting.gguf"));
        Tokenizer glmTokenizer;
        try (GgufFile file = GgufFile.open(glm)) {
            glmTokenizer = Tokenizers.fromMetadata(file.metadata());
        }
        KtNativeBackend plain = glmBackend(glm, "none");
        KtNativeBackend mtp = glmBackend(glm, "draft-mtp");
        try (plain; mtp; LlamaReference server = LlamaReference.start(glm, "--spec-type", "draft-mtp")) {
            int[] ids = glmTokenizer.encode("one two three four five", true, false);
            String greedy = ours(plain, glmTokenizer, ids);
            Counts before = mtp.speculativeDecoding().orElseThrow();
            String ours = ours(mtp, glmTokenizer, ids);
            Counts after = mtp.speculativeDecoding().orElseThrow();
            JsonNode response = theirs(server, ids);
            String theirs = glmTokenizer.decode(response.path("tokens").valueStream().mapToInt(JsonNode::asInt)
                    .toArray());
            long drafted = after.draftedTokens() - before.draftedTokens();
            long taken = after.acceptedTokens() - before.acceptedTokens();
            JsonNode timings = response.path("timings");
            assertThat(ours).as("MTP-speculative tokens against plain greedy").isEqualTo(greedy);
            assertThat(ours).as("against llama-server's (%s)", timings).isEqualTo(theirs);
            assertThat(new long[] {drafted, taken}).as("drafted and accepted against llama-server's (%s)", timings)
                    .containsExactly(timings.path("draft_n").asLong(), timings.path("draft_n_accepted").asLong());
            assertThat(taken).as("accepted of %d drafted", drafted).isGreaterThan(drafted / 2);
        }
    }

    /**
     * A copy of the generated glm4moe whose blocks add nothing to the residual stream (attention outputs and FFN down
     * projections zero), so the model chooses by the current token's embedding alone, and whose NextN block passes the
     * normed token embedding through ({@code eh_proj} = [I | 0], {@code enorm} ones, the block adding nothing) to the
     * output head behind the output norm's weights as {@code shared_head_norm}: it then predicts what the model
     * chooses after the token it is given.
     */
    private static Path predictingNextN(Path source, Path target) throws Exception {
        java.nio.file.Files.copy(source, target, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        try (GgufFile file = GgufFile.open(source);
             java.nio.channels.FileChannel out = java.nio.channels.FileChannel.open(target,
                     java.nio.file.StandardOpenOption.WRITE)) {
            byte[] all = java.nio.file.Files.readAllBytes(source);
            dev.lazarus.kt.gguf.GgufTensorInfo first = file.tensors().getFirst();
            byte[] head = file.data(first).asSlice(0, 64).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
            long dataStart = indexOf(all, head) - first.offset();
            int nextn = (int) file.integer("glm4moe.block_count") - 1;
            int dim = (int) file.integer("glm4moe.embedding_length");
            for (dev.lazarus.kt.gguf.GgufTensorInfo t : file.tensors()) {
                String name = t.name();
                float[] values = null;
                if (name.matches("blk\\.\\d+\\.(attn_output|ffn_down).*")) {
                    values = new float[(int) t.elements()];
                } else if (name.equals("blk." + nextn + ".nextn.eh_proj.weight")) {
                    values = new float[2 * dim * dim];
                    for (int r = 0; r < dim; r++) {
                        values[r * 2 * dim + r] = 1; // output row r takes the normed embedding's r-th value
                    }
                } else if (name.equals("blk." + nextn + ".nextn.enorm.weight")) {
                    values = new float[dim];
                    Arrays.fill(values, 1);
                } else if (name.equals("blk." + nextn + ".nextn.shared_head_norm.weight")) {
                    values = file.data(file.tensor("output_norm.weight"))
                            .toArray(java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED);
                }
                if (values != null) {
                    assertThat(t.type()).as(name).isEqualTo(dev.lazarus.kt.gguf.GgmlType.F32);
                    java.nio.ByteBuffer bytes = java.nio.ByteBuffer.allocate(4 * values.length)
                            .order(java.nio.ByteOrder.LITTLE_ENDIAN);
                    bytes.asFloatBuffer().put(values);
                    out.write(bytes, dataStart + t.offset());
                }
            }
        }
        return target;
    }

    private static long indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        throw new IllegalStateException("tensor data not found in the file");
    }

    private static KtNativeBackend glmBackend(Path model, String specType) throws Exception {
        return ((KtNativeBackend) new KtNativeBackendFactory().create(new BackendConfig("kt-glm-" + specType,
                "kt-native", Map.of("model", model.toString(), "threads", 1, "context-size", 1024, "model-name", "m",
                        "flash-attention", "off", "spec-type", specType))))
                .awaitReady(Duration.ofMinutes(1));
    }

    /** Greedy continuations of repetitive prompts on both; the failures listed; returns the draft tokens accepted. */
    private static long compare(KtNativeBackend backend, LlamaReference llama) {
        List<String> prompts = List.of(
                "one two three four five, one two three four five, one two three four five, one two",
                "The cat sat on the mat. The cat sat on the mat. The cat sat on the mat. The cat",
                "abc abc abc abc abc abc abc abc abc abc abc abc");
        List<String> failures = new ArrayList<>();
        long accepted = 0;
        for (String text : prompts) {
            int[] ids = tokenizer.encode(text, true, false);
            Counts before = backend.speculativeDecoding().orElseThrow();
            String ours = ours(backend, ids);
            Counts after = backend.speculativeDecoding().orElseThrow();
            JsonNode response = theirs(llama, ids);
            int[] tokens = response.path("tokens").valueStream().mapToInt(JsonNode::asInt).toArray();
            String theirs = tokenizer.decode(tokens);
            long drafted = after.draftedTokens() - before.draftedTokens();
            long taken = after.acceptedTokens() - before.acceptedTokens();
            JsonNode timings = response.path("timings");
            if (!ours.equals(theirs) || drafted != timings.path("draft_n").asLong()
                    || taken != timings.path("draft_n_accepted").asLong()) {
                failures.add("%s:%n  engine       %s (drafted %d, accepted %d)%n  llama-server %s (%s)".formatted(text,
                        ours.replace("\n", "\\n"), drafted, taken, theirs.replace("\n", "\\n"), timings));
            }
            accepted += taken;
        }
        assertThat(failures).as("speculative continuations against llama-server").isEmpty();
        return accepted;
    }

    /** The backend's greedy continuation, end-of-generation tokens biased away (llama-server's {@code ignore_eos}). */
    private static String ours(KtNativeBackend backend, int[] prompt) {
        return ours(backend, tokenizer, prompt);
    }

    private static String ours(KtNativeBackend backend, Tokenizer tokenizer, int[] prompt) {
        Map<String, Double> banned = new HashMap<>();
        for (int id = 0; id < tokenizer.vocabSize(); id++) {
            if (tokenizer.isEog(id)) {
                banned.put(String.valueOf(id), -100.0);
            }
        }
        CompletionRequest request = new CompletionRequest("m", Arrays.stream(prompt).boxed().toList(), null, TOKENS,
                0.0, null, null, null, null, null, null, null, null, null, null, banned, null, null, Map.of());
        List<Completion> chunks = backend.completion(request).collectList().block(Duration.ofMinutes(2));
        assertThat(chunks.getLast().usage().completionTokens()).isEqualTo(TOKENS);
        return chunks.stream().filter(c -> !c.choices().isEmpty()).map(c -> c.choices().getFirst().text())
                .collect(Collectors.joining());
    }

    /** llama-server's greedy continuation with its timings (the draft counts). */
    private static JsonNode theirs(LlamaReference llama, int[] prompt) {
        ObjectNode request = LlamaReference.JSON.createObjectNode();
        var ids = request.putArray("prompt");
        Arrays.stream(prompt).forEach(ids::add);
        request.put("n_predict", TOKENS).put("temperature", 0.0).put("ignore_eos", true).put("cache_prompt", false)
                .put("return_tokens", true);
        JsonNode response = LlamaReference.JSON.readTree(llama.server().post("/completion",
                LlamaReference.JSON.writeValueAsString(request)));
        assertThat(response.path("tokens").size()).as("llama-server's tokens").isEqualTo(TOKENS);
        return response;
    }
}
