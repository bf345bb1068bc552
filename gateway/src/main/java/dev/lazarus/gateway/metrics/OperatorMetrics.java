package dev.lazarus.gateway.metrics;

import dev.lazarus.backend.api.ExpertPlacementView;
import dev.lazarus.backend.api.ExpertPlacementView.TierStats;
import dev.lazarus.backend.api.SpeculativeDecodingView;
import dev.lazarus.backend.api.SpeculativeDecodingView.Counts;
import dev.lazarus.gateway.policy.gate.BenchmarkJobs;
import dev.lazarus.gateway.policy.gate.Verdict;
import dev.lazarus.gateway.routing.BackendRegistry;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;
import org.springframework.stereotype.Component;

/**
 * What the dashboard shows beside the request meters: {@code lazarus_gate_verdicts_total{verdict}} (decision-gate
 * jobs of this gateway by verdict) and, for each backend that places experts (kt-native), its tiers:
 * {@code lazarus_expert_tier_experts{backend,tier}}, {@code lazarus_expert_tier_bytes{backend,tier}} and
 * {@code lazarus_expert_tier_hit_ratio{backend,tier}} (NaN while the model loads); for each backend that decodes
 * speculatively, {@code lazarus_speculative_draft_tokens_total{backend}}, {@code lazarus_speculative_accepted_tokens_total{backend}},
 * {@code lazarus_speculative_acceptance_ratio{backend}} and {@code lazarus_speculative_tokens_per_step{backend}} (NaN
 * before there is anything to divide). Read at scrape time.
 */
@Component
class OperatorMetrics implements MeterBinder {

    private static final List<String> TIERS = List.of("gpu", "ram", "mmap");

    private final BenchmarkJobs jobs;
    private final BackendRegistry backends;

    OperatorMetrics(BenchmarkJobs jobs, BackendRegistry backends) {
        this.jobs = jobs;
        this.backends = backends;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        for (Verdict verdict : Verdict.values()) {
            FunctionCounter.builder("lazarus.gate.verdicts", jobs, j -> j.verdicts(verdict))
                    .description("decision-gate jobs of this gateway that ended with this verdict")
                    .tag("verdict", verdict.name().toLowerCase(Locale.ROOT))
                    .register(registry);
        }
        backends.all().stream().filter(b -> b instanceof ExpertPlacementView).forEach(backend -> {
            ExpertPlacementView view = (ExpertPlacementView) backend;
            for (String tier : TIERS) {
                tierGauge(registry, "lazarus.expert.tier.experts", "experts placed in this tier", backend.id(), tier,
                        view, TierStats::experts);
                tierGauge(registry, "lazarus.expert.tier.bytes", "bytes of expert weights in this tier", backend.id(),
                        tier, view, TierStats::bytes);
                tierGauge(registry, "lazarus.expert.tier.hit.ratio",
                        "share of the bytes computed that this tier served", backend.id(), tier, view,
                        TierStats::byteHitRate);
            }
        });
        backends.all().stream().filter(b -> b instanceof SpeculativeDecodingView v && v.decodesSpeculatively())
                .forEach(backend -> {
            SpeculativeDecodingView view = (SpeculativeDecodingView) backend;
            FunctionCounter.builder("lazarus.speculative.draft.tokens", view, v -> count(v, Counts::draftedTokens))
                    .description("draft tokens the model verified").tag("backend", backend.id()).register(registry);
            FunctionCounter.builder("lazarus.speculative.accepted.tokens", view, v -> count(v, Counts::acceptedTokens))
                    .description("draft tokens the model accepted").tag("backend", backend.id()).register(registry);
            Gauge.builder("lazarus.speculative.acceptance.ratio", view,
                            v -> v.speculativeDecoding().map(Counts::acceptanceRate).orElse(Double.NaN))
                    .description("accepted of the verified draft tokens since start").tag("backend", backend.id())
                    .register(registry);
            Gauge.builder("lazarus.speculative.tokens.per.step", view,
                            v -> v.speculativeDecoding().map(Counts::tokensPerStep).orElse(Double.NaN))
                    .description("tokens a sequence's decode step emitted, on average since start")
                    .tag("backend", backend.id()).register(registry);
        });
    }

    private static double count(SpeculativeDecodingView view, ToDoubleFunction<Counts> figure) {
        return view.speculativeDecoding().map(figure::applyAsDouble).orElse(0.0);
    }

    private static void tierGauge(MeterRegistry registry, String name, String description, String backend, String tier,
            ExpertPlacementView view, ToDoubleFunction<TierStats> figure) {
        Gauge.builder(name, view, v -> v.expertPlacement().flatMap(p -> p.tiers().stream()
                        .filter(t -> t.tier().equals(tier)).findFirst()).map(figure::applyAsDouble).orElse(Double.NaN))
                .description(description)
                .tag("backend", backend)
                .tag("tier", tier)
                .register(registry);
    }
}
