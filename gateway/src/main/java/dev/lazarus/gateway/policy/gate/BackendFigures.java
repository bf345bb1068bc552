package dev.lazarus.gateway.policy.gate;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.ArrayList;
import java.util.List;

/**
 * One backend's results in a benchmark job.
 *
 * @param backendId       the backend
 * @param prompts         per prompt: its runs and their averages
 * @param tokensPerSecond over every successful run
 * @param ttftMillis      over every successful run
 * @param successRate     successful runs over all runs, 0..1
 */
public record BackendFigures(@JsonProperty("backend_id") String backendId, List<PromptFigures> prompts,
                             @JsonProperty("tokens_per_second") Stat tokensPerSecond,
                             @JsonProperty("ttft_ms") Stat ttftMillis,
                             @JsonProperty("success_rate") double successRate) {

    /**
     * @param prompt the prompt text
     */
    public record PromptFigures(String prompt, List<RunResult> runs,
                                @JsonProperty("tokens_per_second") Stat tokensPerSecond,
                                @JsonProperty("ttft_ms") Stat ttftMillis,
                                @JsonProperty("success_rate") double successRate) {

        public static PromptFigures of(String prompt, List<RunResult> runs) {
            List<RunResult> ok = runs.stream().filter(RunResult::ok).toList();
            return new PromptFigures(prompt, List.copyOf(runs),
                    Stat.of(ok.stream().map(RunResult::tokensPerSecond).toList()),
                    Stat.of(ok.stream().map(RunResult::ttftMillis).toList()),
                    runs.isEmpty() ? 0 : (double) ok.size() / runs.size());
        }
    }

    public static BackendFigures of(String backendId, List<PromptFigures> prompts) {
        List<RunResult> all = new ArrayList<>();
        prompts.forEach(p -> all.addAll(p.runs()));
        List<RunResult> ok = all.stream().filter(RunResult::ok).toList();
        return new BackendFigures(backendId, List.copyOf(prompts),
                Stat.of(ok.stream().map(RunResult::tokensPerSecond).toList()),
                Stat.of(ok.stream().map(RunResult::ttftMillis).toList()),
                all.isEmpty() ? 0 : (double) ok.size() / all.size());
    }
}
