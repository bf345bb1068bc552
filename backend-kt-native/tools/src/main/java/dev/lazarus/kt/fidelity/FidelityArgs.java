package dev.lazarus.kt.fidelity;

import dev.lazarus.kt.model.KvCacheType;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The command line of {@link FidelityMain}, checked: every mistake is a {@link UsageException} with one clear line. */
record FidelityArgs(Path model, URI oracle, Path prompts, FidelityOptions options, boolean raw, boolean json,
                    int threads, FidelityThresholds thresholds, boolean help, Boolean oracleFlashAttention,
                    Integer oracleThreads, KvCacheType oracleCacheK, KvCacheType oracleCacheV) {

    static final String USAGE = """
            usage: fidelity.sh --model X.gguf --oracle http://127.0.0.1:PORT [options]
              --model FILE        the GGUF the engine loads (the oracle must serve the same file)
              --oracle URL        llama-server's base URL
              --prompts FILE      one prompt per line (text, a "JSON string", or a [JSON array] of token ids;
                                  # starts a comment); default: 6 built-in prompts
              --raw               send texts as they are instead of as a chat user turn through the model's template
              --tokens N          greedy tokens per prompt (default 64)
              --top N             oracle candidates compared per position (default 5)
              --one-pass          teacher-force prompt and continuation in one forward pass (one prefill) instead
                                  of one decode step per token as the oracle generated them: cheaper, but each
                                  position then runs other kernels than the oracle's (see docs/fidelity.md)
              --free-running      with --one-pass, also run the engine's own greedy continuation to find where it
                                  leaves the oracle's (stepwise forcing reports it anyway)
              --threads N         engine threads (default: all processors)
              --oracle-fa on|off  the oracle's -fa (its /props does not say; default on: llama-server's -fa auto
                                  on a CPU); the engine computes attention in the same order
              --oracle-threads N  the oracle's -t, which splits a flash-attention decode step past 256 cells
                                  (default: this machine's physical cores, llama-server's default)
              --oracle-ctk T      the oracle's -ctk, --oracle-ctv T its -ctv (/props does not say; default f16):
                                  the engine's KV cache takes the same types, or the agreement is not measured
              --json              print the report as JSON
              --min-top1 F        exit 1 unless the overall top-1 agreement is at least F (0..1)
              --max-delta X       exit 1 unless the overall max |delta logprob| is at most X
            exit: 0 measured (and thresholds met), 1 a threshold missed, 2 bad arguments, 3 measurement failed
            """;

    /** A mistake on the command line. */
    static final class UsageException extends Exception {
        UsageException(String message) {
            super(message);
        }
    }

    static FidelityArgs parse(String... args) throws UsageException {
        Path model = null;
        URI oracle = null;
        Path prompts = null;
        int tokens = FidelityOptions.DEFAULT_TOKENS;
        int top = FidelityOptions.DEFAULT_TOP_LOGPROBS;
        boolean freeRunning = false;
        Forcing forcing = Forcing.STEPWISE;
        boolean raw = false;
        boolean json = false;
        int threads = Runtime.getRuntime().availableProcessors();
        double minTop1 = Double.NaN;
        double maxDelta = Double.NaN;
        Boolean oracleFa = null;
        Integer oracleThreads = null;
        KvCacheType oracleCacheK = null;
        KvCacheType oracleCacheV = null;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            switch (arg) {
                case "--help", "-h" -> {
                    return new FidelityArgs(null, null, null, FidelityOptions.defaults(), false, false, 1,
                            FidelityThresholds.NONE, true, null, null, null, null);
                }
                case "--model" -> model = file(arg, value(args, ++i, arg));
                case "--oracle" -> oracle = url(value(args, ++i, arg));
                case "--prompts" -> prompts = file(arg, value(args, ++i, arg));
                case "--tokens" -> tokens = positive(arg, value(args, ++i, arg));
                case "--top" -> top = positive(arg, value(args, ++i, arg));
                case "--threads" -> threads = positive(arg, value(args, ++i, arg));
                case "--oracle-threads" -> oracleThreads = positive(arg, value(args, ++i, arg));
                case "--oracle-fa" -> oracleFa = onOrOff(arg, value(args, ++i, arg));
                case "--oracle-ctk" -> oracleCacheK = cacheType(arg, value(args, ++i, arg));
                case "--oracle-ctv" -> oracleCacheV = cacheType(arg, value(args, ++i, arg));
                case "--min-top1" -> minTop1 = number(arg, value(args, ++i, arg), 0, 1);
                case "--max-delta" -> maxDelta = number(arg, value(args, ++i, arg), 0, Double.MAX_VALUE);
                case "--free-running" -> freeRunning = true;
                case "--one-pass" -> forcing = Forcing.ONE_PASS;
                case "--raw" -> raw = true;
                case "--json" -> json = true;
                default -> throw new UsageException("unknown argument " + arg);
            }
        }
        if (model == null) {
            throw new UsageException("--model is required");
        }
        if (oracle == null) {
            throw new UsageException("--oracle is required");
        }
        return new FidelityArgs(model, oracle, prompts, new FidelityOptions(tokens, top, forcing, freeRunning), raw, json,
                threads, new FidelityThresholds(minTop1, maxDelta), false, oracleFa, oracleThreads,
                oracleCacheK, oracleCacheV);
    }

    private static boolean onOrOff(String option, String value) throws UsageException {
        return switch (value) {
            case "on" -> true;
            case "off" -> false;
            default -> throw new UsageException(option + " " + value + ": on or off");
        };
    }

    private static KvCacheType cacheType(String option, String value) throws UsageException {
        try {
            return KvCacheType.parse(value);
        } catch (IllegalArgumentException e) {
            throw new UsageException(option + " " + value + ": one of " + KvCacheType.names());
        }
    }

    private static String value(String[] args, int i, String option) throws UsageException {
        if (i >= args.length || args[i].startsWith("--")) {
            throw new UsageException(option + " needs a value");
        }
        return args[i];
    }

    private static Path file(String option, String value) throws UsageException {
        Path path = Path.of(value);
        if (!Files.isRegularFile(path) || !Files.isReadable(path)) {
            throw new UsageException(option + " " + value + ": no such readable file");
        }
        return path;
    }

    private static URI url(String value) throws UsageException {
        try {
            URI uri = new URI(value);
            if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) || uri.getHost() == null) {
                throw new UsageException("--oracle " + value + ": not an http(s) URL such as http://127.0.0.1:8080");
            }
            return uri;
        } catch (URISyntaxException e) {
            throw new UsageException("--oracle " + value + ": not a URL (" + e.getReason() + ")");
        }
    }

    private static int positive(String option, String value) throws UsageException {
        try {
            int n = Integer.parseInt(value);
            if (n >= 1) {
                return n;
            }
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw new UsageException(option + " " + value + ": not a whole number ≥ 1");
    }

    private static double number(String option, String value, double min, double max) throws UsageException {
        try {
            double d = Double.parseDouble(value);
            if (d >= min && d <= max) {
                return d;
            }
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw new UsageException(option + " " + value + ": not a number within [" + min + ", "
                + (max == Double.MAX_VALUE ? "∞" : max) + "]");
    }
}
