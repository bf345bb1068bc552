package dev.lazarus.kt.bench;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.grammar.ByteVocab;
import dev.lazarus.kt.grammar.ChatGrammars;
import dev.lazarus.kt.grammar.CompiledGrammar;
import dev.lazarus.kt.grammar.GrammarCache;
import dev.lazarus.kt.grammar.VocabIndex;
import dev.lazarus.kt.model.Model;
import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.runtime.EndReason;
import dev.lazarus.kt.runtime.EngineOptions;
import dev.lazarus.kt.runtime.InferenceEngine;
import dev.lazarus.kt.runtime.SequenceListener;
import dev.lazarus.kt.sampling.Penalties;
import dev.lazarus.kt.sampling.Sampler;
import dev.lazarus.kt.sampling.SamplingParams;
import dev.lazarus.kt.synthetic.ByteBpeVocab;
import dev.lazarus.kt.synthetic.SyntheticModels;
import dev.lazarus.kt.tokenizer.Tokenizer;
import dev.lazarus.kt.tokenizer.Tokenizers;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Decode under a JSON schema against free decode, alternated round by round on one engine: greedy tokens from the
 * engine's sampler with and without the schema's grammar (random weights: the grammar masks nearly every step, the
 * worst case). Then on a 150,000-token vocabulary (the generated models' vocabulary is small): the vocabulary
 * index's build, and the sampler's step with and without the schema (greedy and sampled) along the same grammar
 * with random logits, and the decode ratio the difference implies at the measured decode speed.
 *
 * <pre>{@code
 * ./mvnw -q -pl backend-kt-native/tools -am -Pbench verify -DskipTests \
 *     -Dbench.main=dev.lazarus.kt.bench.GrammarDecodeBench -Dbench.args="--rounds 5 --tokens 128 --threads 2"
 * }</pre>
 * With {@code --vocab-model 150000}, decode is then measured on a generated model with that vocabulary too.
 * <pre>{@code
 * }</pre>
 */
public final class GrammarDecodeBench {

    static final Map<String, Object> SCHEMA = Map.of("type", "object", "properties", Map.of(
            "items", Map.of("type", "array", "items", Map.of("type", "object", "properties", Map.of(
                    "name", Map.of("type", "string"), "qty", Map.of("type", "integer"),
                    "tags", Map.of("type", "array", "items", Map.of("enum", List.of("new", "used")))),
                    "required", List.of("name", "qty"))),
            "note", Map.of("type", "string")), "required", List.of("items"));

    public static void main(String[] args) throws Exception {
        int rounds = intArg(args, "--rounds", 5);
        int tokens = intArg(args, "--tokens", 128);
        int threads = intArg(args, "--threads", 2);
        Path dir = Files.createTempDirectory("lazarus-grammar-bench");
        Path model = SyntheticModels.write(SyntheticModels.wideQwen3Moe().withWeightType(GgmlType.Q8_0),
                dir.resolve("wide-qwen3moe-q8_0.gguf"));
        try (GgufFile file = GgufFile.open(model); Parallel parallel = Parallel.ofThreads(threads)) {
            Tokenizer tokenizer = Tokenizers.fromMetadata(file.metadata());
            Model m = Model.load(file, parallel);
            InferenceEngine engine = new InferenceEngine(m, new EngineOptions(2048, 1, 4, 512, 0), parallel);
            CompiledGrammar grammar = new GrammarCache(tokenizer).compile(ChatGrammars.responseFormat(SCHEMA));
            int vocab = tokenizer.vocabSize();
            decode(engine, vocab, null, tokens); // warm-up, both paths
            decode(engine, vocab, grammar, tokens);
            double free = 0;
            double constrained = 0;
            for (int r = 0; r < rounds; r++) {
                double f = decode(engine, vocab, null, tokens);
                double c = decode(engine, vocab, grammar, tokens);
                System.out.printf("round %d: free %.1f tok/s, json schema %.1f tok/s (%.2fx)%n", r + 1, f, c, c / f);
                free += f / rounds;
                constrained += c / rounds;
            }
            System.out.printf("decode, %s (vocabulary %d), %d threads: free %.1f tok/s, json schema %.1f tok/s: %.2fx%n",
                    model.getFileName(), vocab, threads, free, constrained, constrained / free);
            double stepMicros = 1e6 / free;
            largeVocabulary(150_000, 2000, stepMicros);
            engine.close();
        }
        int vocabModel = intArg(args, "--vocab-model", 0);
        if (vocabModel > 0) {
            largeVocabularyModel(dir, vocabModel, rounds, tokens, threads);
        }
    }

    /**
     * Decode on a generated model whose vocabulary has {@code size} tokens (tiny-llama's layers, random byte-level
     * BPE merges of ASCII word pieces): free against under the schema, alternated round by round.
     */
    static void largeVocabularyModel(Path dir, int size, int rounds, int tokens, int threads) throws Exception {
        Path model = SyntheticModels.write(SyntheticModels.tinyLlama(), randomMerges(size, new SplittableRandom(3)),
                dir.resolve("tiny-llama-" + size + ".gguf"));
        try (GgufFile file = GgufFile.open(model); Parallel parallel = Parallel.ofThreads(threads)) {
            Tokenizer tokenizer = Tokenizers.fromMetadata(file.metadata());
            Model m = Model.load(file, parallel);
            InferenceEngine engine = new InferenceEngine(m, new EngineOptions(2048, 1, 4, 512, 0), parallel);
            long start = cpuNanos();
            CompiledGrammar grammar = new GrammarCache(tokenizer).compile(ChatGrammars.responseFormat(SCHEMA));
            System.out.printf("grammar compiled for %,d tokens: %.0f ms CPU%n", tokenizer.vocabSize(), (cpuNanos() - start) / 1e6);
            int vocab = tokenizer.vocabSize();
            for (int warm = 0; warm < 3; warm++) {
                decode(engine, vocab, null, tokens);
                decode(engine, vocab, grammar, tokens);
            }
            double free = 0;
            double constrained = 0;
            for (int r = 0; r < rounds; r++) { // which goes first alternates, so a drift in speed favours neither
                double c = r % 2 == 1 ? decode(engine, vocab, grammar, tokens) : 0;
                double f = decode(engine, vocab, null, tokens);
                c = r % 2 == 1 ? c : decode(engine, vocab, grammar, tokens);
                System.out.printf("round %d: free %.1f tok/s, json schema %.1f tok/s (%.2fx)%n", r + 1, f, c, c / f);
                free += f / rounds;
                constrained += c / rounds;
            }
            System.out.printf("decode, %s (vocabulary %,d), %d threads: free %.1f tok/s, json schema %.1f tok/s: %.2fx%n",
                    model.getFileName(), vocab, threads, free, constrained, constrained / free);
            engine.close();
        }
    }

    /** Byte-level BPE merges spelling random ASCII word pieces, each prefix a token, to {@code size} tokens in all. */
    private static ByteBpeVocab randomMerges(int size, SplittableRandom r) {
        // in the vocabulary's spelling: printable ASCII stands for itself, a space is \u0120 and a newline \u010A
        String alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789{}[]\":,.-_\u0120\u010A";
        java.util.Set<String> known = new java.util.HashSet<>();
        List<String> merges = new ArrayList<>();
        int wanted = size - 256 - 3; // the byte tokens and the ChatML control tokens come with the vocabulary
        while (merges.size() < wanted) {
            int len = 2 + r.nextInt(8);
            StringBuilder piece = new StringBuilder().append(alphabet.charAt(r.nextInt(alphabet.length())));
            for (int i = 1; i < len && merges.size() < wanted; i++) {
                String next = String.valueOf(alphabet.charAt(r.nextInt(alphabet.length())));
                if (known.add(piece + next)) {
                    merges.add(piece + " " + next);
                }
                piece.append(next);
            }
        }
        return ByteBpeVocab.fromMerges(merges);
    }

    /** Tokens per second of one greedy generation after a one-token prompt. */
    static double decode(InferenceEngine engine, int vocab, CompiledGrammar grammar, int tokens) {
        Sampler sampler = new Sampler(SamplingParams.greedy(tokens), vocab, 2048, grammar == null ? null : grammar.matcher());
        Timed timed = new Timed(sampler, tokens);
        engine.submit(new int[] {1}, timed);
        timed.done.orTimeout(10, TimeUnit.MINUTES).join();
        return (timed.produced - 1) / ((timed.lastNanos - timed.firstNanos) / 1e9);
    }

    /**
     * On a generated vocabulary of {@code size} tokens: the index build, then the sampler's step with and without
     * the schema, greedy and sampled, in thread CPU time (a shared machine's load does not inflate it), and the
     * decode ratio the difference implies at {@code stepMicros} per decode step.
     */
    static void largeVocabulary(int size, int steps, double stepMicros) {
        ByteVocab vocab = randomVocab(size, new SplittableRandom(11));
        long start = cpuNanos();
        VocabIndex.of(vocab);
        System.out.printf("vocabulary index of %,d tokens: %.0f ms CPU%n", size, (cpuNanos() - start) / 1e6);
        CompiledGrammar grammar = new GrammarCache(vocab).compile(ChatGrammars.responseFormat(SCHEMA));
        SamplingParams sampled = new SamplingParams(0.8f, 40, 0.95f, 0.05f, 1, Penalties.NONE, Map.of(), false, 0,
                steps, List.of());
        for (SamplingParams params : List.of(SamplingParams.greedy(steps), sampled)) {
            double freeStep = samplerStep(vocab, null, params, steps);
            double constrainedStep = samplerStep(vocab, grammar, params, steps);
            // a decode step on this vocabulary: the forward pass measured above plus the free sampler's step
            double base = stepMicros + freeStep;
            System.out.printf("%s sampler step on %,d tokens: free %.0f us, json schema %.0f us CPU;"
                    + " at %.0f us per decode step: %.2fx%n", params.isGreedy() ? "greedy" : "top-k 40, temperature 0.8",
                    size, freeStep, constrainedStep, stepMicros, base / (stepMicros + constrainedStep));
        }
    }

    /** Mean CPU microseconds of one sampler step (with the grammar: mask and accept) along the schema, random logits. */
    private static double samplerStep(ByteVocab vocab, CompiledGrammar grammar, SamplingParams params, int steps) {
        int size = vocab.vocabSize();
        SplittableRandom random = new SplittableRandom(5);
        float[] logits = new float[size];
        long nanos = 0;
        for (int pass = 0; pass < 2; pass++) { // the first pass warms up
            nanos = 0;
            int done = 0;
            while (done < steps) {
                Sampler sampler = new Sampler(params, size, 1 << 20, grammar == null ? null : grammar.matcher());
                for (int i = 0; i < 200 && done < steps; i++, done++) {
                    for (int t = 0; t < size; t++) {
                        logits[t] = (float) random.nextGaussian();
                    }
                    long start = cpuNanos();
                    int token = sampler.next(logits).token();
                    nanos += cpuNanos() - start;
                    if (vocab.isEog(token)) {
                        break;
                    }
                }
            }
        }
        return nanos / 1e3 / steps;
    }

    private static long cpuNanos() {
        return ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
    }

    private static int intArg(String[] args, String name, int def) {
        for (int i = 0; i + 1 < args.length; i++) {
            if (args[i].equals(name)) {
                return Integer.parseInt(args[i + 1]);
            }
        }
        return def;
    }

    private static final class Timed implements SequenceListener {
        final CompletableFuture<Void> done = new CompletableFuture<>();
        final Sampler sampler;
        final int wanted;
        int produced;
        long firstNanos;
        long lastNanos;

        Timed(Sampler sampler, int wanted) {
            this.sampler = sampler;
            this.wanted = wanted;
        }

        @Override
        public int select(float[] logits) {
            return sampler.next(logits).token();
        }

        @Override
        public boolean accept(int token) {
            long now = System.nanoTime();
            if (produced++ == 0) {
                firstNanos = now;
            }
            lastNanos = now;
            return produced < wanted;
        }

        @Override
        public void ended(EndReason reason) {
            done.complete(null);
        }

        @Override
        public void failed(Throwable error) {
            done.completeExceptionally(error);
        }
    }

    /** A large vocabulary of word pieces, punctuation runs, digits, non-ASCII text and byte tokens; the last is EOS. */
    private static ByteVocab randomVocab(int size, SplittableRandom r) {
        List<byte[]> out = new ArrayList<>(size);
        for (int b = 0; b < 256; b++) {
            out.add(new byte[] {(byte) b});
        }
        String punctuation = " \n\t{}[]\":,.-_!?()'";
        String letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        while (out.size() < size - 1) {
            StringBuilder s = new StringBuilder();
            int kind = r.nextInt(10);
            int len = 1 + r.nextInt(kind < 7 ? 9 : 4);
            for (int i = 0; i < len; i++) {
                s.append(switch (kind) {
                    case 7 -> punctuation.charAt(r.nextInt(punctuation.length()));
                    case 8 -> (char) (0x4E00 + r.nextInt(2000));
                    default -> i == 0 && r.nextBoolean() ? ' ' : letters.charAt(r.nextInt(letters.length()));
                });
            }
            out.add(s.toString().getBytes(StandardCharsets.UTF_8));
        }
        out.add("<eos>".getBytes(StandardCharsets.UTF_8));
        return new ByteVocab(out);
    }
}
