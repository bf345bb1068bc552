package dev.lazarus.gateway.policy.gate;

import dev.lazarus.gateway.policy.Actor;
import dev.lazarus.gateway.policy.BackendPolicyState;
import dev.lazarus.gateway.policy.PolicyConflictException;
import dev.lazarus.gateway.policy.PolicyEngine;
import dev.lazarus.gateway.policy.PolicyState;
import dev.lazarus.gateway.policy.PreflightCheck;
import dev.lazarus.gateway.policy.Role;
import dev.lazarus.gateway.policy.RouteOverrides;
import dev.lazarus.gateway.policy.UnknownBackendException;
import dev.lazarus.gateway.routing.BackendRegistry;
import dev.lazarus.gateway.routing.ModelRoute;
import dev.lazarus.gateway.routing.RouteTable;
import dev.lazarus.gateway.routing.RouteTarget;
import java.time.Clock;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs decision-gate jobs: the benchmark protocol on a candidate and on the oracle of its model in
 * the same job (each call of the candidate followed by the same call of the oracle, so both see the
 * same machine), then the candidate's agreement with the oracle on the same prompts, the verdict,
 * its audit entry, and the promotion on GO when auto-promote is on.
 * Jobs run one at a time: two benchmarks at once would slow each other down.
 */
public final class BenchmarkJobs implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(BenchmarkJobs.class);
    private static final int KEPT_JOBS = 100;

    /**
     * @param thresholds    the verdict thresholds
     * @param defaultRuns   runs per prompt when a job does not say
     * @param autoPromote   promote on GO
     * @param requestExtra  extra fields for every benchmark request
     * @param agreement     how agreement with the oracle is measured; null: it is not
     */
    public record Settings(GateThresholds thresholds, int defaultRuns, boolean autoPromote,
                           Map<String, Object> requestExtra, AgreementProbe agreement) {}

    private final PolicyEngine engine;
    private final BackendRegistry backends;
    private final RouteTable routes;
    private final RouteOverrides overrides;
    private final PreflightCheck preflight;
    private final BenchmarkRunner runner;
    private final Settings settings;
    private final Clock clock;
    private final GateLease lease;
    private final ExecutorService executor = Executors.newSingleThreadExecutor(
            Thread.ofPlatform().name("lazarus-gate").daemon().factory());
    private final Map<String, BenchmarkJob> jobs = java.util.Collections.synchronizedMap(
            new LinkedHashMap<>(16, 0.75f, false) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, BenchmarkJob> eldest) {
                    return size() > KEPT_JOBS;
                }
            });

    /** Verdicts given since start, for the gate's metric. */
    private final Map<Verdict, LongAdder> verdicts = new EnumMap<>(Verdict.class);

    {
        for (Verdict v : Verdict.values()) {
            verdicts.put(v, new LongAdder());
        }
    }

    public BenchmarkJobs(PolicyEngine engine, BackendRegistry backends, RouteTable routes, RouteOverrides overrides,
            PreflightCheck preflight, BenchmarkRunner runner, Settings settings, GateLease lease, Clock clock) {
        this.lease = lease;
        this.engine = engine;
        this.backends = backends;
        this.routes = routes;
        this.overrides = overrides;
        this.preflight = preflight;
        this.runner = runner;
        this.settings = settings;
        this.clock = clock;
    }

    /**
     * Queues a job for a candidate in state CANDIDATE or PROMOTED.
     *
     * @param runs  runs per prompt, or null for the configured default
     * @param extra extra request fields for this job, over the configured ones
     * @throws UnknownBackendException  no such backend
     * @throws IllegalArgumentException the backend is an oracle
     * @throws PolicyConflictException  the candidate is disabled or rolled back, or another replica is
     *                                  running its decision gate
     */
    public BenchmarkJob submit(String candidateId, Integer runs, Map<String, Object> extra) {
        BackendPolicyState state = engine.state(candidateId).orElseThrow(() -> new UnknownBackendException(candidateId));
        if (state.role() != Role.CANDIDATE) {
            throw new IllegalArgumentException("Backend '" + candidateId + "' is an oracle; the gate evaluates candidates.");
        }
        if (state.state() != PolicyState.CANDIDATE && state.state() != PolicyState.PROMOTED) {
            throw new PolicyConflictException("invalid_transition", "Cannot benchmark backend '" + candidateId
                    + "': it is " + state.state() + " (" + state.reason() + "). Enable it first.");
        }
        if (!lease.take(candidateId)) {
            throw gateElsewhere(candidateId);
        }
        RouteTarget candidate = targetFor(candidateId);
        Optional<RouteTarget> oracle = oracleFor(candidateId);
        int perPrompt = runs == null ? settings.defaultRuns() : runs;
        Map<String, Object> requestExtra = new LinkedHashMap<>(settings.requestExtra());
        requestExtra.putAll(extra);
        int total = perPrompt * BenchmarkRunner.PROMPTS.size() * (oracle.isPresent() ? 2 : 1);
        if (oracle.isPresent() && settings.agreement() != null) {
            total += settings.agreement().maxCalls(BenchmarkRunner.PROMPTS.size());
        }
        BenchmarkJob job = new BenchmarkJob(UUID.randomUUID().toString(), candidateId,
                oracle.map(RouteTarget::backendId).orElse(null), candidate.backendModel(), perPrompt, "running", 0,
                total, clock.instant(), null, null, null, null, null, List.of(), false, null);
        jobs.put(job.id(), job);
        try {
            executor.execute(() -> run(job, candidate, oracle.orElse(null), Map.copyOf(requestExtra)));
        } catch (RejectedExecutionException e) {
            jobs.put(job.id(), job.failed(clock.instant(), "the gateway is shutting down"));
        }
        return job;
    }

    /** How many jobs of this gateway ended with {@code verdict} since it started. */
    public long verdicts(Verdict verdict) {
        return verdicts.get(verdict).sum();
    }

    /** The jobs this gateway ran or runs (the last ones kept), newest first. */
    public List<BenchmarkJob> all() {
        synchronized (jobs) {
            return new ArrayList<>(jobs.values()).reversed();
        }
    }

    public Optional<BenchmarkJob> find(String id) {
        return Optional.ofNullable(jobs.get(id));
    }

    private static PolicyConflictException gateElsewhere(String candidateId) {
        return new PolicyConflictException("gate_running_elsewhere", "A decision gate job for backend '"
                + candidateId + "' is running on another replica; its verdict will be in the journal (/admin/events).");
    }

    private void run(BenchmarkJob job, RouteTarget candidate, RouteTarget oracle, Map<String, Object> extra) {
        // Queued behind another job, the lease may have gone to another replica meanwhile.
        if (!lease.take(job.candidate())) {
            jobs.put(job.id(), job.failed(clock.instant(), gateElsewhere(job.candidate()).getMessage()));
            return;
        }
        try {
            List<BackendFigures.PromptFigures> candidateFigures = new ArrayList<>();
            List<BackendFigures.PromptFigures> oracleFigures = new ArrayList<>();
            int done = 0;
            for (String prompt : BenchmarkRunner.PROMPTS) {
                List<RunResult> c = new ArrayList<>();
                List<RunResult> o = new ArrayList<>();
                for (int run = 1; run <= job.runs(); run++) {
                    c.add(runner.run(candidate, prompt, run, extra));
                    progressed(job, ++done);
                    if (oracle != null) {
                        o.add(runner.run(oracle, prompt, run, extra));
                        progressed(job, ++done);
                    }
                }
                candidateFigures.add(BackendFigures.PromptFigures.of(prompt, c));
                oracleFigures.add(BackendFigures.PromptFigures.of(prompt, o));
            }
            BackendFigures c = BackendFigures.of(candidate.backendId(), candidateFigures);
            BackendFigures o = oracle == null ? null : BackendFigures.of(oracle.backendId(), oracleFigures);
            OracleAgreement agreement = agreement(job, candidate, oracle, extra, done);
            PreflightCheck.Outcome fit = preflight.check(candidate.backendId());
            GateDecision decision = GateDecision.decide(c, o, fit.passed(), agreement, settings.thresholds());
            jobs.put(job.id(), job.done(clock.instant(), c, o, agreement, decision,
                    decide(job, c, o, agreement, decision)));
            verdicts.get(decision.verdict()).increment();
        } catch (RuntimeException e) {
            log.warn("benchmark job {} for '{}' failed", job.id(), job.candidate(), e);
            jobs.put(job.id(), job.failed(clock.instant(), String.valueOf(e.getMessage())));
        } finally {
            try {
                lease.release(job.candidate());
            } catch (RuntimeException e) {
                log.warn("decision gate lease for '{}' not given back (it expires by itself): {}", job.candidate(),
                        e.toString());
            }
        }
    }

    /** A job's progress; the lease is renewed with it, so a job that takes long keeps it. */
    private void progressed(BenchmarkJob job, int done) {
        jobs.put(job.id(), job.progressed(done));
        lease.take(job.candidate());
    }

    private OracleAgreement agreement(BenchmarkJob job, RouteTarget candidate, RouteTarget oracle,
            Map<String, Object> extra, int callsSoFar) {
        if (settings.agreement() == null) {
            return OracleAgreement.notMeasured("turned off (lazarus.policy.gate.agreement.enabled)");
        }
        if (oracle == null) {
            return OracleAgreement.notMeasured("no oracle in service for this model");
        }
        int[] done = {callsSoFar};
        return settings.agreement().measure(candidate, oracle, BenchmarkRunner.PROMPTS, extra,
                () -> progressed(job, ++done[0]));
    }

    /** Journals the verdict and promotes on GO when allowed; returns whether it promoted. */
    private boolean decide(BenchmarkJob job, BackendFigures c, BackendFigures o, OracleAgreement a,
            GateDecision decision) {
        Map<String, Object> figures = new LinkedHashMap<>();
        figures.put("job", job.id());
        figures.put("verdict", decision.verdict().name());
        figures.put("tokens_per_second", finite(c.tokensPerSecond().mean()));
        figures.put("tokens_per_second_stdev", finite(c.tokensPerSecond().stdev()));
        figures.put("ttft_ms", finite(c.ttftMillis().mean()));
        figures.put("success_rate", c.successRate());
        if (o != null) {
            figures.put("oracle", o.backendId());
            figures.put("oracle_tokens_per_second", finite(o.tokensPerSecond().mean()));
        }
        if (a.measured()) {
            figures.put("top1_agreement", finite(a.top1Agreement()));
            figures.put("agreement_positions", a.positions());
            if (a.meanAbsLogprobDelta() != null) {
                figures.put("mean_abs_logprob_delta", finite(a.meanAbsLogprobDelta()));
                figures.put("max_abs_logprob_delta", finite(a.maxAbsLogprobDelta()));
            }
            if (a.firstDivergence() != null) {
                figures.put("first_divergence", a.firstDivergence());
            }
        }
        String reason = "verdict " + decision.verdict() + ": " + String.join("; ", decision.reasons());
        engine.note(job.candidate(), Actor.GATE, "gate", reason, figures);
        boolean stillCandidate = engine.state(job.candidate()).map(s -> s.state() == PolicyState.CANDIDATE)
                .orElse(false);
        if (decision.verdict() == Verdict.GO && settings.autoPromote() && stillCandidate) {
            engine.promote(job.candidate(), Actor.GATE, "decision gate GO (job " + job.id() + ")", figures);
            return true;
        }
        return false;
    }

    /** Where the candidate is called: the first route that has it, else its own first model. */
    private RouteTarget targetFor(String candidateId) {
        for (ModelRoute route : routes.routes()) {
            for (RouteTarget target : overrides.targets(route)) {
                if (target.backendId().equals(candidateId)) {
                    return target;
                }
            }
        }
        var backend = backends.find(candidateId).orElseThrow(() -> new UnknownBackendException(candidateId));
        String model = backend.describe().models().isEmpty() ? candidateId : backend.describe().models().getFirst().id();
        return new RouteTarget(backend, model);
    }

    /** The first in-service oracle of the first route that has the candidate. */
    private Optional<RouteTarget> oracleFor(String candidateId) {
        for (ModelRoute route : routes.routes()) {
            List<RouteTarget> targets = overrides.targets(route);
            if (targets.stream().anyMatch(t -> t.backendId().equals(candidateId))) {
                return targets.stream()
                        .filter(t -> engine.state(t.backendId())
                                .map(s -> s.role() == Role.ORACLE && s.state() == PolicyState.ACTIVE).orElse(false))
                        .findFirst();
            }
        }
        return Optional.empty();
    }

    private static double finite(double value) {
        return Double.isFinite(value) ? Math.round(value * 1000) / 1000.0 : -1;
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }
}
