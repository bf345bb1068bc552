package dev.lazarus.kt.bench;

import dev.lazarus.kt.testsupport.LlamaCpp;
import java.nio.file.Path;
import java.util.List;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Debian's {@code llama-bench} (from the project's chroot) on the same GGUF and thread count. */
final class LlamaBench {

    record Result(double prefillTps, double decodeTps) {}

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private LlamaBench() {
    }

    /** One {@code llama-bench -p prompt -n gen -t threads -r reps -o json} run. */
    static Result run(Path model, int prompt, int gen, int threads, int reps) {
        return run(model, prompt, gen, 0, threads, reps, List.of());
    }

    /**
     * As above at {@code depth} positions of filled context ({@code -d}; llama-bench fills it untimed before each
     * test), with {@code flags} added (e.g. {@code -fa 1}).
     */
    static Result run(Path model, int prompt, int gen, int depth, int threads, int reps, List<String> flags) {
        List<String> args = new java.util.ArrayList<>(List.of("-m", model.toAbsolutePath().toString(),
                "-p", Integer.toString(prompt), "-n", Integer.toString(gen), "-d", Integer.toString(depth),
                "-t", Integer.toString(threads), "-r", Integer.toString(reps), "-o", "json"));
        args.addAll(flags);
        return parse(LlamaCpp.runTool("llama-bench", args, 3600));
    }

    /** The JSON array llama-bench prints on stdout, found among its log lines (stderr is merged in). */
    static Result parse(String output) {
        int start = output.indexOf("\n[\n");
        int end = output.lastIndexOf("\n]");
        if (!output.startsWith("[\n") && start < 0 || end < 0) {
            throw new IllegalStateException("no JSON array in llama-bench output:\n" + output);
        }
        String json = output.startsWith("[\n") ? output.substring(0, end + 2) : output.substring(start + 1, end + 2);
        double prefill = Double.NaN, decode = Double.NaN;
        for (JsonNode test : JSON.readTree(json)) {
            if (test.path("n_prompt").asInt() > 0 && test.path("n_gen").asInt() == 0) {
                prefill = test.path("avg_ts").asDouble();
            } else if (test.path("n_gen").asInt() > 0 && test.path("n_prompt").asInt() == 0) {
                decode = test.path("avg_ts").asDouble();
            }
        }
        return new Result(prefill, decode);
    }
}
