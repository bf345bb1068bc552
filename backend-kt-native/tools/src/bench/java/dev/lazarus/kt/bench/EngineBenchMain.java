package dev.lazarus.kt.bench;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.model.AttentionOrder;
import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.synthetic.SyntheticModels;
import dev.lazarus.kt.testsupport.LlamaCpp;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

/**
 * The kt-native engine against llama.cpp's {@code llama-bench} on the same GGUF and thread count,
 * alternated round by round so that load from other processes hits both alike. Prints a Markdown
 * table (engine tok/s, llama.cpp tok/s, ratio, effective bandwidth vs the measured one).
 *
 * <pre>
 * scripts/bench-engine.sh [--models q8_0,q4_k_m] [--threads 2] [--rounds 3] [--prompt 512] [--gen 128]
 *                         [--work /tmp/lazarus-bench] [--no-llama] [--experts none,default,mmap,ram,ram-copy (each -java, -native or -auto or not)]
 *                         [--fork] [--warmup-tokens 1024] [--depths 0,8192,32768] [--llama-flags -fa,1]
 *                         [--attention nonflash,flash]
 * </pre>
 * {@code --depths}: each prefill and decode also at that many positions already in the context (llama-bench's
 * {@code -d}: the context is filled untimed before each test; kt-native computes the prefix once per test and reuses it
 * from its prefix cache, copied before the timed part). {@code --llama-flags}: comma-separated arguments added to every
 * llama-bench run, e.g. {@code -fa,1} or {@code -fa,1,-ub,2048,-b,2048} (llama.cpp's best flags for the machine; commas
 * because Maven hands the options over as one space-separated string).
 * Before the measured rounds each engine runs one prefill and {@code --warmup-tokens} decode tokens, not counted:
 * C2 compiles the vector kernels only after ~1000 tokens on 2 cores, and llama-bench warms up before measuring too.
 * {@code --experts} runs one engine per expert tier (see {@link KtEngineBench}), alternated within each round.
 * {@code --attention} likewise one engine per attention order: {@code nonflash} (llama-server {@code -fa off}, the
 * default here) or {@code flash} ({@code -fa on} with {@code --threads}, the backend's default).
 * {@code --fork} runs each model and expert mode in a JVM of its own (same JVM options and class path, one after the
 * other), so that no configuration's numbers depend on the JIT profiles another left behind; without it they run in
 * sequence in this JVM, as a gateway serving several models would.
 * Models are the synthetic {@code benchQwen3Moe} preset: {@code q8_0} written directly, {@code q4_k_m} (and
 * {@code q2_k}, {@code q3_k_m}, {@code iq4_xs}, {@code iq4_nl}) quantized from an F16 copy with Debian's llama-quantize; the
 * same names prefixed {@code deepseek32-} are the {@code benchDeepseek32} preset (sparse attention past 256 positions),
 * prefixed {@code qwen35moe-}, {@code qwen3next-} and {@code minimax-m2-} the {@code benchQwen35Moe},
 * {@code benchQwen3Next} (gated DeltaNet blocks) and {@code benchMinimaxM2} presets; any other value is taken as a GGUF
 * path.
 */
public final class EngineBenchMain {

    private EngineBenchMain() {
    }

    public static void main(String[] args) throws IOException {
        Map<String, String> opt = options(args);
        if (opt.containsKey("fork")) {
            fork(args, List.of(opt.getOrDefault("models", "q8_0,q4_k_m").split(",")),
                    List.of(opt.getOrDefault("experts", "none").split(",")));
            return;
        }
        int threads = Integer.parseInt(opt.getOrDefault("threads", Integer.toString(Runtime.getRuntime().availableProcessors())));
        int rounds = Integer.parseInt(opt.getOrDefault("rounds", "3"));
        int prompt = Integer.parseInt(opt.getOrDefault("prompt", "512"));
        int gen = Integer.parseInt(opt.getOrDefault("gen", "128"));
        int warmup = Integer.parseInt(opt.getOrDefault("warmup-tokens", "1024"));
        List<Integer> depths = java.util.Arrays.stream(opt.getOrDefault("depths", "0").split(","))
                .map(String::trim).map(Integer::parseInt).toList();
        int maxDepth = depths.stream().mapToInt(Integer::intValue).max().orElse(0);
        List<String> llamaFlags = opt.getOrDefault("llama-flags", "").isBlank() ? List.of()
                : List.of(opt.get("llama-flags").trim().split(","));
        boolean llama = !opt.containsKey("no-llama");
        Path work = Path.of(opt.getOrDefault("work", "/tmp/lazarus-bench"));
        List<String> models = List.of(opt.getOrDefault("models", "q8_0,q4_k_m").split(","));
        List<String> attentions = List.of(opt.getOrDefault("attention", "nonflash").split(","));
        // one engine per expert mode and attention order, alternated within each round
        List<String> expertModes = new ArrayList<>();
        for (String experts : opt.getOrDefault("experts", "none").split(",")) {
            for (String attention : attentions) {
                expertModes.add(attentions.size() > 1 || !attention.equals("nonflash") ? experts + "/" + attention : experts);
            }
        }

        System.out.println("# kt-native vs llama.cpp");
        System.out.println();
        System.out.println("- date: " + OffsetDateTime.now().truncatedTo(ChronoUnit.SECONDS));
        System.out.println("- machine: " + Machine.describe());
        System.out.println("- JVM: " + Runtime.version() + ", threads " + threads + ", rounds " + rounds
                + ", prompt " + prompt + ", gen " + gen + ", depths " + depths + ", warm-up " + warmup + " decode tokens"
                + (llamaFlags.isEmpty() ? "" : ", llama-bench flags " + String.join(" ", llamaFlags)));
        System.out.println("- load before: " + Machine.loadAverage());
        MemoryBandwidth.Result bw;
        try (Parallel p = Parallel.ofThreads(threads)) {
            bw = MemoryBandwidth.measure(p, 5);
        }
        System.out.printf(Locale.ROOT, "- measured memory bandwidth (%d threads, Java): triad %.1f GB/s, read %.1f GB/s%n",
                threads, bw.triadGBs(), bw.readGBs());
        System.out.println();

        List<String> rows = new ArrayList<>();
        for (String name : models) {
            Path model = real(resolve(name.trim(), work));
            ActiveWeights weights;
            try (GgufFile f = GgufFile.open(model)) {
                weights = ActiveWeights.of(f);
            }
            // keyed by expert mode, then depth
            Map<String, Map<Integer, List<KtEngineBench.Result>>> ours = new LinkedHashMap<>();
            Map<Integer, List<LlamaBench.Result>> theirs = new LinkedHashMap<>();
            depths.forEach(d -> theirs.put(d, new ArrayList<>()));
            List<String> loads = new ArrayList<>();
            List<KtEngineBench> engines = new ArrayList<>();
            try {
                for (String mode : expertModes) {
                    String[] variant = mode.split("/");
                    KtEngineBench engine = new KtEngineBench(model, threads, prompt, maxDepth, variant[0],
                            attentionOrder(variant.length > 1 ? variant[1] : "nonflash", threads));
                    engines.add(engine);
                    // warm-up, not counted (llama-bench runs one too): a prefill at the measured prompt size (after a short
                    // one the JIT compiled the batched kernels during the first measured round), then decode until C2 has
                    // compiled the decode path: on 2 cores that takes ~1000 tokens (docs/benchmarks.md#warm-up)
                    engine.run(prompt, Math.min(gen, 64));
                    engine.warmUp(warmup);
                    Map<Integer, List<KtEngineBench.Result>> byDepth = new LinkedHashMap<>();
                    depths.forEach(d -> byDepth.put(d, new ArrayList<>()));
                    ours.put(mode, byDepth);
                }
                for (int r = 0; r < rounds; r++) {
                    loads.add(Machine.loadAverage().split(" ")[0]);
                    System.out.printf(Locale.ROOT, "  [%s round %d]", name, r + 1);
                    for (int depth : depths) {
                        String at = depth > 0 ? " @ d" + depth : "";
                        for (int i = 0; i < engines.size(); i++) {
                            KtEngineBench.Result e = engines.get(i).run(prompt, gen, depth);
                            ours.get(expertModes.get(i)).get(depth).add(e);
                            System.out.printf(Locale.ROOT, " kt-native%s%s pp %.1f tg %.1f tok/s |",
                                    expertModes.size() > 1 ? "[" + expertModes.get(i) + "]" : "", at, e.prefillTps(),
                                    e.decodeTps());
                        }
                        if (llama) {
                            LlamaBench.Result l = LlamaBench.run(model, prompt, gen, depth, threads, 1, llamaFlags);
                            theirs.get(depth).add(l);
                            System.out.printf(Locale.ROOT, " llama.cpp%s pp %.1f tg %.1f tok/s |", at, l.prefillTps(),
                                    l.decodeTps());
                        }
                    }
                    System.out.println();
                }
            } finally {
                engines.forEach(KtEngineBench::close);
            }
            for (Map.Entry<String, Map<Integer, List<KtEngineBench.Result>>> e : ours.entrySet()) {
                boolean tagged = expertModes.size() > 1 || !e.getKey().equals("none");
                String label = model.getFileName() + (tagged ? " [" + e.getKey() + "]" : "");
                for (int depth : depths) {
                    String at = depth > 0 ? " @ d" + depth : "";
                    List<KtEngineBench.Result> mine = e.getValue().get(depth);
                    // bandwidth shares only at depth 0: at a depth the KV cache's reads add to the weights'
                    rows.add(row(label, "decode tg" + gen + at, mine, theirs.get(depth), KtEngineBench.Result::decodeTps,
                            LlamaBench.Result::decodeTps, depth == 0 ? weights : null, bw, loads));
                    rows.add(row(label, "prefill pp" + prompt + at, mine, theirs.get(depth),
                            KtEngineBench.Result::prefillTps, LlamaBench.Result::prefillTps, null, bw, loads));
                }
            }
            String label = model.getFileName().toString();
            System.out.printf(Locale.ROOT, "  %s: %.1f MB weights, %.1f MB active per token (experts %.1f MB, head %.1f MB)%n",
                    label, weights.totalBytes() / 1e6, weights.activeBytes() / 1e6, weights.expertBytesPerToken() / 1e6,
                    weights.headBytes() / 1e6);
        }
        System.out.println();
        System.out.println("| model | test | kt-native tok/s | llama.cpp tok/s | ratio | kt-native eff. GB/s | llama.cpp eff. GB/s | of read BW | load 1m |");
        System.out.println("|---|---|---|---|---|---|---|---|---|");
        rows.forEach(System.out::println);
        System.out.println();
        System.out.println("- load after: " + Machine.loadAverage());
    }

    private static AttentionOrder attentionOrder(String name, int threads) {
        return switch (name) {
            case "nonflash" -> AttentionOrder.NON_FLASH;
            case "flash" -> AttentionOrder.flash(threads);
            default -> throw new IllegalArgumentException("--attention: flash or nonflash, got '" + name + "'");
        };
    }

    /**
     * This benchmark once per model and expert mode, each in a child JVM with this one's options, class path and
     * arguments: engines of two placements in one JVM slow each other down (their kernels' type profiles mix: Q4_K_M
     * decode -15 % with mmap and ram side by side, docs/benchmarks.md#warm-up).
     */
    private static void fork(String[] args, List<String> models, List<String> expertModes) throws IOException {
        for (String model : models) {
            for (String mode : expertModes) {
                forkOne(args, model, mode);
            }
        }
    }

    private static void forkOne(String[] args, String model, String mode) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments());
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), EngineBenchMain.class.getName()));
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--fork" -> { }
                case "--models", "--experts" -> i++;
                default -> command.add(args[i]);
            }
        }
        command.addAll(List.of("--models", model.trim(), "--experts", mode.trim()));
        try {
            int exit = new ProcessBuilder(command).inheritIO().start().waitFor();
            if (exit != 0) {
                throw new IllegalStateException("benchmark of " + model + " [" + mode + "] exited with " + exit);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while benchmarking " + model, e);
        }
    }

    private static <E, L> String row(String model, String test, List<E> ours, List<L> theirs, ToDoubleFunction<E> o,
                                     ToDoubleFunction<L> t, ActiveWeights weights, MemoryBandwidth.Result bw,
                                     List<String> loads) {
        Stats a = Stats.of(ours.stream().mapToDouble(o).toArray());
        Stats b = Stats.of(theirs.stream().mapToDouble(t).toArray());
        String ratio = theirs.isEmpty() ? "-"
                : String.format(Locale.ROOT, "%.2f (median %.2f)", a.mean() / b.mean(), a.median() / b.median());
        String effA = "-", effB = "-", share = "-";
        if (weights != null) {
            double gbA = weights.activeBytes() * a.mean() / 1e9;
            effA = String.format(Locale.ROOT, "%.1f", gbA);
            share = String.format(Locale.ROOT, "%.0f%%", 100 * gbA / bw.readGBs());
            if (!theirs.isEmpty()) {
                double gbB = weights.activeBytes() * b.mean() / 1e9;
                effB = String.format(Locale.ROOT, "%.1f", gbB);
                share += String.format(Locale.ROOT, " / %.0f%%", 100 * gbB / bw.readGBs());
            }
        }
        return String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |", model, test, a, theirs.isEmpty() ? "-" : b,
                ratio, effA, effB, share, String.join(" ", loads));
    }

    record Stats(double mean, double stdev, double median) {
        static Stats of(double[] v) {
            double[] sorted = v.clone();
            java.util.Arrays.sort(sorted);
            int n = sorted.length;
            double median = n == 0 ? Double.NaN : n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
            double m = 0;
            for (double x : v) {
                m += x / v.length;
            }
            double s = 0;
            for (double x : v) {
                s += (x - m) * (x - m);
            }
            return new Stats(m, v.length > 1 ? Math.sqrt(s / (v.length - 1)) : 0, median);
        }

        @Override
        public String toString() {
            return String.format(Locale.ROOT, "%.1f ± %.1f (median %.1f)", mean, stdev, median);
        }
    }

    /**
     * A preset name ({@code q8_0}; llama-quantize's {@code q4_k_m}, {@code q2_k}, {@code q3_k_m}, {@code iq4_xs},
     * {@code iq4_nl}) generated under {@code work} when missing, or a GGUF path.
     */
    private static Path resolve(String name, Path work) {
        String lower = name.toLowerCase(Locale.ROOT);
        for (Map.Entry<String, Supplier<SyntheticModels.Spec>> e : ARCHITECTURE_PRESETS.entrySet()) {
            if (lower.startsWith(e.getKey())) { // deepseek32-q8_0, qwen3next-q4_k_m, ...: the same from that preset
                return preset(e.getValue().get(), lower.substring(e.getKey().length()), work);
            }
        }
        return preset(SyntheticModels.benchQwen3Moe(), lower, work);
    }

    /** {@link #resolve}'s prefixes for the presets of the other architectures (a regression of theirs shows there). */
    private static final Map<String, Supplier<SyntheticModels.Spec>> ARCHITECTURE_PRESETS = Map.of(
            "deepseek32-", SyntheticModels::benchDeepseek32, "qwen35moe-", SyntheticModels::benchQwen35Moe,
            "qwen3next-", SyntheticModels::benchQwen3Next, "minimax-m2-", SyntheticModels::benchMinimaxM2);

    private static Path preset(SyntheticModels.Spec spec, String name, Path work) {
        Path q8 = work.resolve(spec.name() + "-q8_0.gguf");
        switch (name) {
            case "q8_0" -> {
                if (!Files.exists(q8)) {
                    SyntheticModels.write(spec.withWeightType(GgmlType.Q8_0), q8);
                }
                return q8;
            }
            case "q4_k_m", "q2_k", "q3_k_m", "iq4_xs", "iq4_nl" -> {
                // llama-quantize's recipes of that name, from an F16 copy
                Path quantized = work.resolve(spec.name() + "-" + name + ".gguf");
                if (!Files.exists(quantized)) {
                    Path f16 = work.resolve(spec.name() + "-f16.gguf");
                    if (!Files.exists(f16)) {
                        SyntheticModels.write(spec.withWeightType(GgmlType.F16), f16);
                    }
                    LlamaCpp.quantize(f16, quantized, name.toUpperCase(Locale.ROOT));
                }
                return quantized;
            }
            default -> {
                return Path.of(name);
            }
        }
    }

    private static Path real(Path p) {
        try {
            // llama.cpp runs in a chroot where only the file's own directory is bound: no symlinks
            return p.toRealPath();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static Map<String, String> options(String[] args) {
        Map<String, String> opt = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument '" + args[i] + "'");
            }
            String key = args[i].substring(2);
            boolean flag = i + 1 >= args.length || args[i + 1].startsWith("--");
            opt.put(key, flag ? "" : args[++i]);
        }
        return opt;
    }
}
