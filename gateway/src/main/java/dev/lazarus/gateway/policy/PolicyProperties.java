package dev.lazarus.gateway.policy;

import jakarta.validation.Valid;
import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.DecimalMax;
import jakarta.validation.constraints.DecimalMin;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.annotation.Validated;

/**
 * The rollback policy, under {@code lazarus.policy.*}. Defaults are the operators' runbook values
 * (docs/architecture.md, "The rollback policy").
 *
 * @param store       where states, overrides and the audit journal live: {@code embedded} (one file, one
 *                    gateway) or {@code postgres} (one database shared by several replicas)
 * @param storePath   directory of the embedded store; blank keeps everything in memory, lost at restart
 * @param postgres    the shared store's database, with {@code store: postgres}
 * @param replicaId   this gateway's name among replicas (journal entries, leases, live figures); blank: host
 *                    name and process id
 * @param autoPromote promote a candidate as soon as the decision gate says GO
 * @param backends    per backend id: its role, method and model size
 * @param preflight   hardware probe sources and the memory headroom
 * @param gate        the benchmark protocol and verdict thresholds
 * @param pivot       the runtime rules that roll a promoted candidate back
 */
@Validated
@ConfigurationProperties(prefix = "lazarus.policy")
public record PolicyProperties(
        @DefaultValue("embedded") @NotNull StoreKind store,
        @DefaultValue("./data/lazarus-policy") String storePath,
        @DefaultValue @Valid Postgres postgres,
        String replicaId,
        @DefaultValue("false") boolean autoPromote,
        @DefaultValue Map<String, @Valid Backend> backends,
        @DefaultValue @Valid Preflight preflight,
        @DefaultValue @Valid Gate gate,
        @DefaultValue @Valid Pivot pivot) {

    /** Where the policy keeps what it must not forget. */
    public enum StoreKind { EMBEDDED, POSTGRES }

    /**
     * The shared store, for {@code store: postgres}.
     *
     * @param url             {@code jdbc:postgresql://host:5432/database}
     * @param username        the database user
     * @param password        its password: masked in actuator output and redacted from logs
     * @param pollInterval    the longest a replica goes without looking for the others' changes (a notification
     *                        from the database usually wakes it at once)
     * @param poolSize        connections for reads and writes (one more listens for changes)
     * @param figuresInterval how often this replica publishes its live figures and reads the others'
     */
    public record Postgres(
            String url,
            String username,
            String password,
            @DefaultValue("250ms") @NotNull Duration pollInterval,
            @DefaultValue("4") @Min(1) @Max(64) int poolSize,
            @DefaultValue("2s") @NotNull Duration figuresInterval) {}

    /** {@code store: postgres} needs a URL; it is the one setting that has no sensible default. */
    @AssertTrue(message = "lazarus.policy.postgres.url is required with lazarus.policy.store: postgres")
    public boolean isPostgresConfigured() {
        return store != StoreKind.POSTGRES || postgres.url() != null && !postgres.url().isBlank();
    }

    /**
     * @param role       {@code oracle} (default) or {@code candidate}
     * @param method     what the candidate's CPU must support: {@code kt-native}, {@code llamafile},
     *                   {@code rawint4}, {@code fp8}, {@code fp8-perchannel}, {@code bf16}, {@code amxint4},
     *                   {@code amxint8} or {@code none}; default {@code kt-native} for kind kt-native,
     *                   else {@code none}
     * @param modelBytes size of the candidate's weights for the memory wall; default: from the
     *                   backend's model metadata, else unchecked
     */
    public record Backend(@DefaultValue("oracle") Role role, KtMethod method, DataSize modelBytes) {}

    /**
     * @param cpuinfo          where to read the CPU's vendor, model and flags
     * @param meminfo          where to read MemTotal
     * @param numaNodes        the directory of NUMA nodes ({@code node0}, {@code node1} ...)
     * @param nvidiaSmi        nvidia-smi to ask for GPUs and their memory; blank skips GPUs
     * @param nvidiaSmiTimeout longest nvidia-smi may take
     * @param memoryHeadroom   RAM + VRAM kept free of model weights (KV cache, OS, the JVM)
     */
    public record Preflight(
            @DefaultValue("/proc/cpuinfo") @NotNull Path cpuinfo,
            @DefaultValue("/proc/meminfo") @NotNull Path meminfo,
            @DefaultValue("/sys/devices/system/node") @NotNull Path numaNodes,
            @DefaultValue("nvidia-smi") String nvidiaSmi,
            @DefaultValue("5s") @NotNull Duration nvidiaSmiTimeout,
            @DefaultValue("4GB") @NotNull DataSize memoryHeadroom) {}

    /**
     * @param runs                 times each of the three prompts runs on each backend
     * @param maxTokens            {@code max_tokens} of every benchmark request
     * @param goOracleRatio        with an oracle measured in the job: GO needs at least this many times its speed ...
     * @param holdOracleRatio      ... under this many times it is NO-GO; between the two, HOLD
     * @param floorTokensPerSecond with an oracle: GO also needs at least this absolute speed (0: no floor); a
     *                             candidate that meets the ratio but not the floor is HOLD
     * @param goTokensPerSecond    without an oracle (none serves the model, or it failed every run): GO needs more
     *                             than this ...
     * @param holdTokensPerSecond  ... under this is NO-GO; between the two, HOLD
     * @param maxTtft              GO needs the average time to first token under this
     * @param minSuccessRate       GO needs a success rate above this; under it, NO-GO
     * @param callTimeout          longest one benchmark call may take before it counts as failed
     * @param requestExtra         extra fields sent with every benchmark request (e.g. {@code cache_prompt: false})
     * @param autoRun              start a gate job by itself whenever a candidate becomes CANDIDATE (and at
     *                             start for every candidate that is), once the candidate's health check says UP
     * @param autoRunHealthWait    how long such a job waits for the candidate to be UP before it is skipped
     * @param agreement            the candidate's agreement with the oracle on the oracle's greedy path
     */
    public record Gate(
            @DefaultValue("3") @Min(1) @Max(50) int runs,
            @DefaultValue("256") @Min(1) int maxTokens,
            @DefaultValue("1.1") @DecimalMin("0") double goOracleRatio,
            @DefaultValue("0.75") @DecimalMin("0") double holdOracleRatio,
            @DefaultValue("0") @DecimalMin("0") double floorTokensPerSecond,
            @DefaultValue("12") @DecimalMin("0") double goTokensPerSecond,
            @DefaultValue("8") @DecimalMin("0") double holdTokensPerSecond,
            @DefaultValue("2s") @NotNull Duration maxTtft,
            @DefaultValue("0.95") @DecimalMin("0") @DecimalMax("1") double minSuccessRate,
            @DefaultValue("5m") @NotNull Duration callTimeout,
            @DefaultValue Map<String, Object> requestExtra,
            @DefaultValue("false") boolean autoRun,
            @DefaultValue("10m") @NotNull Duration autoRunHealthWait,
            @DefaultValue @Valid Agreement agreement) {

        /** A hold threshold over its GO one would make HOLD impossible and NO-GO swallow what should pass. */
        @AssertTrue(message = "hold-oracle-ratio must not be above go-oracle-ratio, nor hold-tokens-per-second above"
                + " go-tokens-per-second")
        public boolean isHoldUnderGo() {
            return holdOracleRatio <= goOracleRatio && holdTokensPerSecond <= goTokensPerSecond;
        }
    }

    /**
     * Agreement with the oracle, teacher-forced on its greedy path over the gate's prompts: a
     * faster candidate that computes something else (fewer or deferred experts, INT4 weights) loses
     * quality silently, and only a comparison with the oracle shows it.
     *
     * @param enabled             measure it in every gate job that has an oracle
     * @param forcedTokens        positions per prompt (each costs one call of the oracle and one of the candidate)
     * @param floor               top-1 agreement under this is NO-GO
     * @param maxMeanLogprobDelta mean |Δ logprob| (nats) over the oracle's top-5 above this is NO-GO
     * @param required            a candidate whose agreement cannot be measured (no logprobs, no assistant
     *                            prefill, no oracle) is HOLD instead of GO
     */
    public record Agreement(
            @DefaultValue("true") boolean enabled,
            @DefaultValue("16") @Min(1) @Max(256) int forcedTokens,
            @DefaultValue("0.9") @DecimalMin("0") @DecimalMax("1") double floor,
            @DefaultValue("0.5") @DecimalMin("0") double maxMeanLogprobDelta,
            @DefaultValue("false") boolean required) {}

    /**
     * @param tokensPerSecondFloor a promoted candidate generating slower than this (absolute: while it is
     *                             promoted the oracle serves nothing, so there is no live oracle speed to
     *                             compare with; set it from the oracle's speed the gate measured) ...
     * @param slowWindow           ... for this long is rolled back
     * @param checkInterval        how often the speed rule looks at the live stats
     * @param fatalErrorPatterns   regular expressions (case-insensitive) that make a backend error fatal:
     *                             one match rolls a promoted candidate back
     * @param breakerOpenings      a promoted candidate whose breaker opens this many times ...
     * @param breakerWindow        ... within this window is rolled back
     */
    public record Pivot(
            @DefaultValue("10") @DecimalMin("0") double tokensPerSecondFloor,
            @DefaultValue("60s") @NotNull Duration slowWindow,
            @DefaultValue("5s") @NotNull Duration checkInterval,
            @DefaultValue({"out of memory", "\\bOOM\\b", "CUDA error", "CUBLAS_STATUS_", "cudaError",
                    "illegal memory access", "device-side assert", "GGML_ASSERT", "ggml_abort", "segmentation fault",
                    "SIGSEGV", "SIGABRT", "core dumped", "kernel error", "crashed", "exited unexpectedly"})
            List<String> fatalErrorPatterns,
            @DefaultValue("3") @Min(1) int breakerOpenings,
            @DefaultValue("10m") @NotNull Duration breakerWindow) {}

    /** The configured policy of one backend, or the defaults (an oracle). */
    public Backend backend(String id) {
        Backend configured = backends.get(id);
        return configured != null ? configured : new Backend(Role.ORACLE, null, null);
    }
}
