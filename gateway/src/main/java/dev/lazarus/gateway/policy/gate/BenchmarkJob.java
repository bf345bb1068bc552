package dev.lazarus.gateway.policy.gate;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;

/**
 * A decision-gate job as the admin API shows it; a new value replaces the old one as the job
 * advances.
 *
 * @param id          job id
 * @param candidate   the candidate benchmarked
 * @param oracle      the oracle benchmarked beside it, or null when its models have none
 * @param model       the model name both were called with
 * @param runs        runs per prompt
 * @param status      {@code running}, {@code done} or {@code failed}
 * @param progress    calls finished so far
 * @param total       calls the job makes
 * @param submittedAt when it was asked for
 * @param finishedAt  when it ended, or null
 * @param candidateFigures the candidate's results, when done
 * @param oracleFigures    the oracle's results, when done and there is one
 * @param agreement   the candidate's agreement with the oracle on its greedy path, when done
 * @param verdict     GO / HOLD / NO_GO, when done
 * @param reasons     why
 * @param promoted    whether the job promoted the candidate (GO with auto-promote)
 * @param error       why the job itself failed, or null
 */
public record BenchmarkJob(String id, String candidate, String oracle, String model, int runs, String status,
                           int progress, int total, @JsonProperty("submitted_at") Instant submittedAt,
                           @JsonProperty("finished_at") Instant finishedAt,
                           @JsonProperty("candidate_figures") BackendFigures candidateFigures,
                           @JsonProperty("oracle_figures") BackendFigures oracleFigures,
                           OracleAgreement agreement, Verdict verdict,
                           List<String> reasons, boolean promoted, String error) {

    /** Calls finished, in percent of the job's calls. */
    @JsonProperty("percent")
    public int percent() {
        return total == 0 ? 100 : (int) (100L * progress / total);
    }

    /**
     * Seconds the running job likely still takes, from its pace so far; null before its first call ends or once it
     * has ended.
     */
    @JsonProperty("eta_seconds")
    public Long etaSeconds() {
        if (!"running".equals(status) || progress == 0 || submittedAt == null) {
            return null;
        }
        long elapsed = java.time.Duration.between(submittedAt, Instant.now()).toSeconds();
        return Math.max(0, elapsed * (total - progress) / progress);
    }

    BenchmarkJob progressed(int done) {
        return new BenchmarkJob(id, candidate, oracle, model, runs, status, Math.min(done, total), total, submittedAt,
                null, null, null, null, null, List.of(), false, null);
    }

    BenchmarkJob done(Instant at, BackendFigures c, BackendFigures o, OracleAgreement a, GateDecision decision,
            boolean wasPromoted) {
        return new BenchmarkJob(id, candidate, oracle, model, runs, "done", total, total, submittedAt, at, c, o, a,
                decision.verdict(), decision.reasons(), wasPromoted, null);
    }

    BenchmarkJob failed(Instant at, String why) {
        return new BenchmarkJob(id, candidate, oracle, model, runs, "failed", progress, total, submittedAt, at, null,
                null, null, null, List.of(), false, why);
    }
}
