package dev.lazarus.gateway.policy.preflight;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendFactories;
import dev.lazarus.backend.api.ModelInfo;
import dev.lazarus.gateway.policy.KtMethod;
import dev.lazarus.gateway.policy.PreflightCheck;
import dev.lazarus.kt.backend.KtNativeBackend;
import dev.lazarus.kt.synthetic.SyntheticModels;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The memory wall counts what kt-native's KV caches may grow to at the cache types it was configured with: the
 * bytes per token its {@code /v1/models} meta reports times its context times its sequences, so a quantised cache
 * plans fewer bytes than an F16 one and a model whose F16 caches would not fit passes with Q4_0.
 */
class KvCacheMemoryWallTest {

    private static final int CONTEXT = 256;
    private static final int SEQUENCES = 3;
    /** The tiny llama: 2 layers of 2 KV heads of 64, K and V: 512 values per token. */
    private static final long VALUES_PER_TOKEN = 2 * 2 * 2 * 64;

    @TempDir
    static Path dir;
    static Path model;

    @BeforeAll
    static void model() {
        model = SyntheticModels.write(SyntheticModels.tinyLlama(), dir.resolve("llama.gguf"));
    }

    @Test
    void aQuantisedCachePlansFewerBytesThanF16AsTheMetaReportsThem() throws Exception {
        Planned f16 = planned("f16");
        Planned q8 = planned("q8_0");
        Planned q4 = planned("q4_0");

        // ggml's bytes per 32 values: f16 64, q8_0 34, q4_0 18
        assertThat(f16.perToken).isEqualTo(VALUES_PER_TOKEN / 32 * 64);
        assertThat(q8.perToken).isEqualTo(VALUES_PER_TOKEN / 32 * 34);
        assertThat(q4.perToken).isEqualTo(VALUES_PER_TOKEN / 32 * 18);
        for (Planned p : List.of(f16, q8, q4)) {
            assertThat(p.kvCache).as(p.type).hasValue(p.perToken * CONTEXT * SEQUENCES);
        }
        assertThat(q8.kvCache.getAsLong()).isLessThan(f16.kvCache.getAsLong());
        assertThat(q4.kvCache.getAsLong()).isLessThan(q8.kvCache.getAsLong());

        // room for the weights and the Q4_0 caches, not for the F16 ones
        long weights = f16.modelBytes.getAsLong();
        long ram = weights + q4.kvCache.getAsLong() + (f16.kvCache.getAsLong() - q4.kvCache.getAsLong()) / 2;
        PreflightCheck.Outcome withF16 = Preflight.evaluate(machine(ram), requirement(f16), 0);
        assertThat(withF16.passed()).isFalse();
        assertThat(withF16.reason()).startsWith("model needs " + Preflight.bytes(weights) + " + KV cache "
                + Preflight.bytes(f16.kvCache.getAsLong()) + " but the memory budget is " + Preflight.bytes(ram));
        assertThat(withF16.figures()).containsEntry("kv_cache_bytes", f16.kvCache.getAsLong());
        PreflightCheck.Outcome withQ4 = Preflight.evaluate(machine(ram), requirement(q4), 0);
        assertThat(withQ4.passed()).as(withQ4.reason()).isTrue();
        assertThat(withQ4.reason()).contains("KV cache " + Preflight.bytes(q4.kvCache.getAsLong()) + " fits");
    }

    @Test
    void aModelWithoutCacheFactsLeavesTheCacheOutOfTheWall() {
        ModelInfo llamaServer = new ModelInfo("m", "llamacpp", 4096, Map.of("model_path", "/nonexistent.gguf"));
        assertThat(ModelSizes.kvCacheOf(llamaServer)).isEmpty();
        ModelInfo oneSequence = new ModelInfo("m", "lazarus", 100, Map.of("kv_bytes_per_token", 7L));
        assertThat(ModelSizes.kvCacheOf(oneSequence)).hasValue(700);
    }

    private record Planned(String type, long perToken, OptionalLong kvCache, OptionalLong modelBytes) {}

    /** A kt-native backend with {@code type} keys and values (flash attention on, which a quantised V needs). */
    private static Planned planned(String type) throws Exception {
        try (KtNativeBackend kt = (KtNativeBackend) BackendFactories.load().create(new BackendConfig("kt", "kt-native",
                Map.of("model", model.toString(), "threads", 1, "context-size", CONTEXT, "max-sequences", SEQUENCES,
                        "cache-type-k", type, "cache-type-v", type, "flash-attention", "on")))) {
            kt.awaitReady(Duration.ofMinutes(1));
            Map<String, Object> meta = kt.describe().models().getFirst().metadata();
            assertThat(meta).containsEntry("cache_type_k", type).containsEntry("max_sequences", SEQUENCES);
            return new Planned(type, ((Number) meta.get("kv_bytes_per_token")).longValue(),
                    ModelSizes.kvCacheFromMetadata(kt), ModelSizes.fromMetadata(kt));
        }
    }

    private static Preflight.Requirement requirement(Planned p) {
        return new Preflight.Requirement(KtMethod.KT_NATIVE, p.modelBytes, p.kvCache, Optional.empty());
    }

    private static HardwareProfile machine(long ramBytes) {
        return new HardwareProfile("GenuineIntel", "test CPU", Set.of("avx2"), 2, 1, ramBytes, List.of(), List.of());
    }
}
