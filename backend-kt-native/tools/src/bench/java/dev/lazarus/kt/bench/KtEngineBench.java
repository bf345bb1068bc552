package dev.lazarus.kt.bench;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.kt.tensor.KernelConfig;
import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.model.AttentionOrder;
import dev.lazarus.kt.model.Model;
import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.parallel.PhaseProfile;
import dev.lazarus.kt.placement.ExpertPlacement;
import dev.lazarus.kt.placement.PlacementConfig;
import dev.lazarus.kt.placement.PlainRamTier;
import dev.lazarus.kt.placement.TierBudget;
import dev.lazarus.kt.runtime.EndReason;
import dev.lazarus.kt.runtime.EngineOptions;
import dev.lazarus.kt.runtime.InferenceEngine;
import dev.lazarus.kt.runtime.SequenceListener;
import dev.lazarus.kt.sampling.Sampler;
import dev.lazarus.kt.tensor.NativeKernels;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The kt-native engine as a server runs it ({@link InferenceEngine}: scheduler, KV cache, greedy
 * token choice), measured the way llama-bench measures: prefill = prompt tokens / time to the
 * first logits (the whole prompt in one forward batch, as llama-bench's 512-token ubatch);
 * decode = generated tokens / time, after a one-token prompt on an empty cache.
 */
final class KtEngineBench implements AutoCloseable {

    record Result(double prefillTps, double decodeTps) {}

    private final GgufFile file;
    private final Parallel parallel;
    private final InferenceEngine engine;
    private final int vocab;
    private final Random random = new Random(7);

    private final ExpertPlacement placement;

    /**
     * {@code experts}: {@code none} (the model's own expert path), {@code default} (the placement the backend makes
     * without placement settings), or every expert through {@link ExpertPlacement} in one tier: {@code mmap} (read in place from the mapped file), {@code ram} (copied once, repacked where a
     * cheaper layout exists), {@code ram-copy} (copied as stored). (The Java kernels' bit-identical alternatives,
     * once suffixes here, are measured kernel by kernel: {@code ExpertKernelBench} with {@code JavaTwins}.) A suffix
     * {@code -java}, {@code -native} (every native kernel) or {@code -auto} (the default selection) after all of them (e.g. {@code default-java,default-native} with
     * {@code --fork}) sets {@link NativeKernels#PROPERTY} for the rest of this JVM: the Java against the native
     * kernels in one invocation, each against llama-bench in its own rounds.
     */
    KtEngineBench(Path model, int threads, int maxPrompt, String experts) {
        this(model, threads, maxPrompt, 0, experts, AttentionOrder.NON_FLASH);
    }

    /** As above, with room for prompts and decodes at up to {@code maxDepth} cached positions, in {@code order}. */
    KtEngineBench(Path model, int threads, int maxPrompt, int maxDepth, String experts, AttentionOrder order) {
        this.file = GgufFile.open(model);
        this.parallel = Parallel.ofThreads(threads);
        java.util.regex.Matcher kernels = java.util.regex.Pattern.compile("-(java|native|auto)$").matcher(experts);
        if (kernels.find()) {
            System.setProperty(KernelConfig.KERNELS_PROPERTY, kernels.group(1));
            experts = experts.substring(0, kernels.start());
        }
        Loaded loaded = load(experts, order);
        this.placement = loaded.placement();
        this.vocab = loaded.model().vocabSize();
        int context = maxDepth + maxPrompt + 1024;
        // at a depth the cached prefix is reused (one prefix-cache entry), as llama-bench -d keeps its filled context
        this.engine = new InferenceEngine(loaded.model(), new EngineOptions(context, 1, 4, maxPrompt, maxDepth > 0 ? 1 : 0),
                parallel);
    }

    /** A model and its expert placement (null: the model's own expert path). */
    private record Loaded(Model model, ExpertPlacement placement) {}

    private Loaded load(String experts, AttentionOrder order) {
        Model m = Model.load(file, parallel, order);
        return new Loaded(m, switch (experts) {
            case "none" -> null;
            case "mmap" -> ExpertPlacement.install(m, "bench", PlacementConfig.cpuOnly(), null);
            // what the backend does with no placement settings (PlacementConfig.from an empty config), CPU only
            case "default" -> ExpertPlacement.install(m, "bench",
                    PlacementConfig.from(new BackendConfig("bench", "kt-native", Map.of())), null);
            case "ram" -> ExpertPlacement.install(m, "bench", PlacementConfig.cpuOnly().withRam(new TierBudget.Ratio(1)), null);
            case "ram-copy" -> PlainRamTier.install(m, "bench", PlacementConfig.cpuOnly().withRam(new TierBudget.Ratio(1)));
            default -> throw new IllegalArgumentException(
                    "--experts: none, default, mmap, ram or ram-copy (then -java, -native or -auto or not), got '" + experts + "'");
        });
    }

    /** Decode-only generations, not measured, until {@code tokens} tokens were generated (the JIT's warm-up). */
    void warmUp(int tokens) {
        for (int done = 0; done < tokens; done += 256) {
            generate(1, Math.min(256, tokens - done));
        }
    }

    /**
     * One prefill, then one decode; with {@code -Dlazarus.kt.parallel.profile=true} each prints where its forward
     * passes' time went ({@link PhaseProfile}).
     */
    Result run(int prompt, int gen) {
        return run(prompt, gen, 0);
    }

    /**
     * As {@link #run(int, int)} with {@code depth} positions already in the cache, as llama-bench's {@code -d}: a
     * prefix of that many tokens is computed once, not timed, and each measured prompt starts with it (the engine
     * copies the cached prefix at admission, before the timed part begins).
     */
    Result run(int prompt, int gen, int depth) {
        int[] prefix = randomTokens(depth);
        if (depth > 0) {
            generate(prefix, 1);
        }
        PhaseProfile.reset();
        double prefill = prefill(prefix, prompt);
        String prefillProfile = PhaseProfile.report("prefill pp" + prompt + ", per forward pass");
        PhaseProfile.reset();
        double decode = decode(prefix, gen);
        if (PhaseProfile.ON) {
            System.out.print(prefillProfile);
            System.out.print(PhaseProfile.report("decode tg" + gen + ", per token"));
        }
        return new Result(prefill, decode);
    }

    private double prefill(int[] prefix, int prompt) {
        Timed timed = generate(concat(prefix, randomTokens(prompt)), 1);
        if (timed.reused != prefix.length) {
            throw new IllegalStateException("expected " + prefix.length + " cached positions, reused " + timed.reused);
        }
        return prompt / seconds(timed.firstNanos - timed.admittedNanos);
    }

    private double decode(int[] prefix, int gen) {
        // the first token comes from the one-token prompt; the rest are the decode steps measured
        Timed timed = generate(concat(prefix, randomTokens(1)), gen + 1);
        return gen / seconds(timed.lastNanos - timed.firstNanos);
    }

    private Timed generate(int promptTokens, int tokens) {
        return generate(randomTokens(promptTokens), tokens);
    }

    private int[] randomTokens(int n) {
        int[] tokens = new int[n];
        for (int i = 0; i < n; i++) {
            tokens[i] = random.nextInt(vocab);
        }
        return tokens;
    }

    private static int[] concat(int[] a, int[] b) {
        int[] c = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }

    private Timed generate(int[] prompt, int tokens) {
        Timed timed = new Timed(tokens);
        timed.startNanos = System.nanoTime();
        engine.submit(prompt, timed);
        timed.done.orTimeout(30, TimeUnit.MINUTES).join();
        return timed;
    }

    private static double seconds(long nanos) {
        return nanos / 1e9;
    }

    /** Greedy choice; records when the first and the last token were chosen. */
    private static final class Timed implements SequenceListener {
        final CompletableFuture<Void> done = new CompletableFuture<>();
        final int wanted;
        int produced;
        long startNanos, admittedNanos, firstNanos, lastNanos;
        int reused;

        Timed(int wanted) {
            this.wanted = wanted;
        }

        @Override
        public int select(float[] logits) {
            return Sampler.argmax(logits);
        }

        @Override
        public void admitted(int reusedTokens) {
            admittedNanos = System.nanoTime();
            reused = reusedTokens;
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

    @Override
    public void close() {
        engine.close();
        if (placement != null) {
            placement.close();
        }
        parallel.close();
        file.close();
    }
}
