package dev.lazarus.gateway.policy.wiring;

import dev.lazarus.backend.api.BackendHealth;
import dev.lazarus.backend.api.InferenceBackend;
import dev.lazarus.gateway.config.LazarusProperties;
import dev.lazarus.gateway.policy.BackendHealthView;
import dev.lazarus.gateway.policy.BackendLiveStats;
import dev.lazarus.gateway.policy.BreakerEvents;
import dev.lazarus.gateway.policy.BreakerOpenings;
import dev.lazarus.gateway.policy.Breakers;
import dev.lazarus.gateway.policy.KtMethod;
import dev.lazarus.gateway.policy.PolicyCallDecorator;
import dev.lazarus.gateway.policy.PolicyEngine;
import dev.lazarus.gateway.policy.PolicyProperties;
import dev.lazarus.gateway.policy.PolicyRouteOrder;
import dev.lazarus.gateway.policy.PolicyRoutePlanner;
import dev.lazarus.gateway.policy.PolicyStore;
import dev.lazarus.gateway.policy.Replica;
import dev.lazarus.gateway.policy.ReplicaLiveStats;
import dev.lazarus.gateway.policy.ReplicaSync;
import dev.lazarus.gateway.policy.Role;
import dev.lazarus.gateway.policy.RouteOverrides;
import dev.lazarus.gateway.policy.gate.AgreementProbe;
import dev.lazarus.gateway.policy.gate.AutoGate;
import dev.lazarus.gateway.policy.gate.BenchmarkJobs;
import dev.lazarus.gateway.policy.gate.BenchmarkRunner;
import dev.lazarus.gateway.policy.gate.GateLease;
import dev.lazarus.gateway.policy.gate.GateThresholds;
import dev.lazarus.gateway.policy.pivot.BreakerOpeningsRule;
import dev.lazarus.gateway.policy.pivot.FatalErrorRule;
import dev.lazarus.gateway.policy.pivot.PivotMonitor;
import dev.lazarus.gateway.policy.pivot.SlowGenerationRule;
import dev.lazarus.gateway.policy.postgres.PostgresPolicyStore;
import dev.lazarus.gateway.policy.preflight.HardwareProbe;
import dev.lazarus.gateway.policy.preflight.ModelSizes;
import dev.lazarus.gateway.policy.preflight.Preflight;
import dev.lazarus.gateway.routing.BackendRegistry;
import dev.lazarus.gateway.routing.RoutePlanner;
import dev.lazarus.gateway.routing.RouteTable;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Wires the rollback policy into the gateway: its store, state machine, preflight, decision gate
 * and pivot-back rules, and the route planner that puts them in front of every request. It reads
 * circuit breakers, live stats and health from beans the resilience package declares
 * ({@link CircuitBreakerRegistry}, {@link BackendLiveStats}, {@link BackendHealthView}) and does
 * without them when they are absent.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(PolicyProperties.class)
public class PolicyConfiguration {

    private static final Logger log = LoggerFactory.getLogger(PolicyConfiguration.class);

    private final Clock clock = Clock.systemUTC();

    @Bean(destroyMethod = "close")
    PolicyStore policyStore(PolicyProperties properties) {
        if (properties.store() == PolicyProperties.StoreKind.POSTGRES) {
            PolicyProperties.Postgres pg = properties.postgres();
            log.info("policy store: PostgreSQL (shared by every replica), replica '{}'", replica(properties).id());
            return new PostgresPolicyStore(pg.url(), pg.username(), pg.password(), pg.pollInterval(), pg.poolSize());
        }
        if (properties.storePath() == null || properties.storePath().isBlank()) {
            log.warn("lazarus.policy.store-path is blank: policy states and the audit journal are not kept across restarts");
            return PolicyStore.inMemory();
        }
        return PolicyStore.open(Path.of(properties.storePath()));
    }

    @Bean
    Replica replica(PolicyProperties properties) {
        return Replica.named(properties.replicaId());
    }

    /** With a shared store: what another replica writes reaches this one's states and routes. */
    @Bean
    ReplicaSync replicaSync(PolicyStore store, PolicyEngine engine, RouteOverrides overrides) {
        return ReplicaSync.attach(store, engine, overrides);
    }

    @Bean
    HardwareProbe hardwareProbe(PolicyProperties properties) {
        PolicyProperties.Preflight p = properties.preflight();
        return new HardwareProbe(new HardwareProbe.Sources(p.cpuinfo(), p.meminfo(), p.numaNodes(), p.nvidiaSmi(),
                p.nvidiaSmiTimeout()));
    }

    @Bean
    Preflight preflight(PolicyProperties properties, LazarusProperties gateway, HardwareProbe probe,
            BackendRegistry backends) {
        Map<String, String> kinds = new LinkedHashMap<>();
        gateway.backends().forEach(b -> kinds.put(b.id(), b.kind()));
        return new Preflight(probe::profile, id -> {
            PolicyProperties.Backend config = properties.backend(id);
            KtMethod method = config.method() != null ? config.method()
                    : "kt-native".equals(kinds.get(id)) ? KtMethod.KT_NATIVE : KtMethod.NONE;
            OptionalLong bytes = config.modelBytes() != null ? OptionalLong.of(config.modelBytes().toBytes())
                    : backends.find(id).map(ModelSizes::fromMetadata).orElse(OptionalLong.empty());
            Optional<String> unsupported = backends.find(id).flatMap(b -> b.describe().models().stream()
                    .flatMap(m -> m.unsupported().stream()).findFirst());
            OptionalLong kvCache = backends.find(id).map(ModelSizes::kvCacheFromMetadata).orElse(OptionalLong.empty());
            return new Preflight.Requirement(method, bytes, kvCache, unsupported);
        }, properties.preflight().memoryHeadroom().toBytes());
    }

    @Bean
    PolicyEngine policyEngine(PolicyStore store, PolicyProperties properties, LazarusProperties gateway,
            Preflight preflight) {
        Map<String, Role> roles = new LinkedHashMap<>();
        gateway.backends().forEach(b -> roles.put(b.id(), properties.backend(b.id()).role()));
        properties.backends().keySet().stream().filter(id -> !roles.containsKey(id)).forEach(id ->
                log.warn("lazarus.policy.backends.{} names no configured backend; ignored", id));
        PolicyEngine engine = new PolicyEngine(store, roles, preflight, clock);
        engine.start();
        return engine;
    }

    @Bean
    RouteOverrides routeOverrides(PolicyStore store, BackendRegistry backends, LazarusProperties gateway) {
        Map<String, String> models = new LinkedHashMap<>();
        gateway.backends().forEach(b -> {
            if (b.model() != null && !b.model().isBlank()) {
                models.put(b.id(), b.model());
            }
        });
        return new RouteOverrides(store, backends, (id, publicName) -> models.getOrDefault(id, publicName), clock);
    }

    /** The gateway's planner: the router uses it in place of the configured order. */
    @Bean
    RoutePlanner policyRoutePlanner(RouteOverrides overrides, PolicyEngine engine) {
        return new PolicyRoutePlanner(overrides, new PolicyRouteOrder(engine));
    }

    /** The 503 for a route whose backends the policy left out names why (drained, disabled, ...). */
    @Bean
    PolicyStateReasons policyStateReasons(PolicyEngine engine) {
        return new PolicyStateReasons(engine);
    }

    @Bean
    Breakers breakers(ObjectProvider<CircuitBreakerRegistry> registry) {
        return new Breakers(registry.getIfAvailable(CircuitBreakerRegistry::ofDefaults));
    }

    @Bean
    PolicyCallDecorator policyCallDecorator(PolicyEngine engine, PolicyProperties properties) {
        return new PolicyCallDecorator(new FatalErrorRule(engine, properties.pivot().fatalErrorPatterns()));
    }

    @Bean(destroyMethod = "close")
    PivotMonitor pivotMonitor(PolicyEngine engine, PolicyProperties properties, Breakers breakers,
            ObjectProvider<BackendLiveStats> stats, PolicyStore store, Replica replica,
            ObjectProvider<ReplicaLiveStats> figures) {
        PolicyProperties.Pivot pivot = properties.pivot();
        BreakerOpeningsRule rule = new BreakerOpeningsRule(engine, pivot.breakerOpenings(), pivot.breakerWindow(), clock);
        BreakerOpenings openings = new BreakerOpenings(breakers.registry(), task -> Schedulers.boundedElastic().schedule(task))
                .subscribe(opening -> rule.opened(opening.backendId()));
        if (store.shared()) {
            openings.subscribe(new BreakerEvents(engine, replica.id())::opened);
        }
        // With replicas the floor is judged on all their traffic together, not on this replica's share.
        BackendLiveStats live = figures.getIfAvailable() != null ? figures.getIfAvailable().view()
                : stats.getIfAvailable(BackendLiveStats::none);
        SlowGenerationRule slow = new SlowGenerationRule(engine, live, pivot.tokensPerSecondFloor(), pivot.slowWindow(),
                clock);
        return new PivotMonitor(slow, pivot.checkInterval());
    }

    /** With a shared store: every replica's live figures, exchanged through it. */
    @Bean(destroyMethod = "close")
    @ConditionalOnProperty(prefix = "lazarus.policy", name = "store", havingValue = "postgres")
    ReplicaLiveStats replicaLiveStats(PolicyStore store, ObjectProvider<BackendLiveStats> stats, PolicyEngine engine,
            Replica replica, PolicyProperties properties) {
        return new ReplicaLiveStats(store, stats.getIfAvailable(BackendLiveStats::none), replica.id(),
                engine.backendIds(), properties.postgres().figuresInterval());
    }

    @Bean(destroyMethod = "close")
    BenchmarkJobs benchmarkJobs(PolicyEngine engine, BackendRegistry backends, RouteTable routes,
            RouteOverrides overrides, Preflight preflight, PolicyProperties properties, PolicyStore store,
            Replica replica) {
        PolicyProperties.Gate gate = properties.gate();
        PolicyProperties.Agreement agreement = gate.agreement();
        GateThresholds thresholds = new GateThresholds(
                new GateThresholds.SpeedThresholds(gate.goOracleRatio(), gate.holdOracleRatio(),
                        gate.floorTokensPerSecond(), gate.goTokensPerSecond(), gate.holdTokensPerSecond()),
                gate.maxTtft(), gate.minSuccessRate(),
                new GateThresholds.AgreementThresholds(agreement.floor(), agreement.maxMeanLogprobDelta(),
                        agreement.required()));
        AgreementProbe probe = agreement.enabled() ? new AgreementProbe(agreement.forcedTokens(), gate.callTimeout())
                : null;
        return new BenchmarkJobs(engine, backends, routes, overrides, preflight,
                new BenchmarkRunner(gate.maxTokens(), gate.callTimeout()),
                new BenchmarkJobs.Settings(thresholds, gate.runs(), properties.autoPromote(), gate.requestExtra(),
                        probe),
                // A lease outlives the longest benchmark call: it is renewed after each one.
                new GateLease(store, replica.id(), gate.callTimeout().plusMinutes(1)),
                clock);
    }

    /** {@code lazarus.policy.gate.auto-run}: gate jobs without an operator; started once the gateway is ready. */
    @Bean(destroyMethod = "close")
    @ConditionalOnProperty(prefix = "lazarus.policy.gate", name = "auto-run", havingValue = "true")
    AutoGate autoGate(PolicyEngine engine, BenchmarkJobs jobs, BackendRegistry backends, PolicyProperties properties) {
        return new AutoGate(engine,
                id -> backends.find(id).map(InferenceBackend::health)
                        .orElseGet(() -> Mono.just(BackendHealth.down("no such backend"))),
                id -> jobs.submit(id, null, Map.of()).id(),
                properties.gate().autoRunHealthWait(), Duration.ofSeconds(5), Schedulers.boundedElastic());
    }

    @Bean
    @ConditionalOnProperty(prefix = "lazarus.policy.gate", name = "auto-run", havingValue = "true")
    ApplicationListener<ApplicationReadyEvent> autoGateStart(AutoGate gate) {
        return ready -> gate.start();
    }
}
