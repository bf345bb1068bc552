package dev.lazarus.kt.backend;

import dev.lazarus.kt.tensor.KernelConfig;
import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendConfigException;
import dev.lazarus.kt.host.HostCpu;
import dev.lazarus.kt.model.AttentionOrder;
import dev.lazarus.kt.model.KvCacheType;
import dev.lazarus.kt.model.KvCacheTypes;
import dev.lazarus.kt.placement.PlacementConfig;
import java.util.Locale;

/**
 * The settings of a {@code kt-native} backend.
 *
 * @param model          a GGUF path, or {@code classpath:} resource (copied to a temp file to be mapped)
 * @param threads        worker threads for the numeric work
 * @param contextSize    positions per sequence; 0: the model's trained context
 * @param maxSequences   sequences decoded together
 * @param maxQueued      requests that may wait for a sequence slot; more are refused as overloaded (429)
 * @param modelName      the name this backend serves the model under
 * @param placement      where routed experts live (GPU, RAM copies, the mapped file)
 * @param warmupTokens   tokens generated at load, before the backend says it is ready, so that the JIT has
 *                       compiled the kernels when traffic comes; 0: none
 * @param attention      the attention order, as llama-server's {@code -fa} ({@code flash-attention}: {@code auto},
 *                       {@code on}, {@code off}) with its thread count ({@code flash-attention-threads})
 * @param cacheTypes     the KV cache's key and value types ({@code cache-type-k}, {@code cache-type-v}: llama-server's
 *                       {@code -ctk}/{@code -ctv} names, default f16)
 * @param kernels        which kernels its matrices take: settings {@code kernels} ({@code auto|native|java}) and
 *                       {@code ggml-variant} ({@code auto} or a llama.cpp CPU variant whose summation orders to take)
 * @param speculative    speculative decoding ({@code spec-*} settings); {@link SpeculativeSettings#NONE} by default
 */
public record KtNativeSettings(String model, int threads, int contextSize, int maxSequences, int maxQueued,
                               String modelName, PlacementConfig placement, int warmupTokens, AttentionOrder attention,
                               KvCacheTypes cacheTypes, KernelConfig kernels, SpeculativeSettings speculative) {

    /** Without speculative decoding. */
    public KtNativeSettings(String model, int threads, int contextSize, int maxSequences, int maxQueued,
                            String modelName, PlacementConfig placement, int warmupTokens, AttentionOrder attention,
                            KvCacheTypes cacheTypes, KernelConfig kernels) {
        this(model, threads, contextSize, maxSequences, maxQueued, modelName, placement, warmupTokens, attention,
                cacheTypes, kernels, SpeculativeSettings.NONE);
    }

    /** With the default F16 KV cache and the JVM's default kernels. */
    public KtNativeSettings(String model, int threads, int contextSize, int maxSequences, int maxQueued,
                            String modelName, PlacementConfig placement, int warmupTokens, AttentionOrder attention) {
        this(model, threads, contextSize, maxSequences, maxQueued, modelName, placement, warmupTokens, attention,
                KvCacheTypes.F16, KernelConfig.fromSystemProperties());
    }

    /** With the JVM's default kernels. */
    public KtNativeSettings(String model, int threads, int contextSize, int maxSequences, int maxQueued,
                            String modelName, PlacementConfig placement, int warmupTokens, AttentionOrder attention,
                            KvCacheTypes cacheTypes) {
        this(model, threads, contextSize, maxSequences, maxQueued, modelName, placement, warmupTokens, attention,
                cacheTypes, KernelConfig.fromSystemProperties());
    }

    public static final int DEFAULT_MAX_QUEUED = 64;

    public static KtNativeSettings from(BackendConfig config) {
        String model = config.requireString("model");
        int threads = positive(config, "threads", Runtime.getRuntime().availableProcessors());
        int context = config.integer("context-size", 0);
        if (context < 0 || context == 1) {
            throw new BackendConfigException(config.id(), "context-size", "setting 'context-size' must be 0 (the model's) or at least 2, got " + context);
        }
        int sequences = positive(config, "max-sequences", 4);
        int queued = config.integer("max-queued", DEFAULT_MAX_QUEUED);
        if (queued < 0) {
            throw new BackendConfigException(config.id(), "max-queued", "setting 'max-queued' must be at least 0, got " + queued);
        }
        String name = config.string("model-name", defaultName(model));
        int warmup = config.integer("warmup-tokens", 0);
        if (warmup < 0) {
            throw new BackendConfigException(config.id(), "warmup-tokens", "setting 'warmup-tokens' must be at least 0, got " + warmup);
        }
        KvCacheTypes cacheTypes = new KvCacheTypes(cacheType(config, "cache-type-k"), cacheType(config, "cache-type-v"));
        return new KtNativeSettings(model, threads, context, sequences, queued, name, PlacementConfig.from(config), warmup,
                attention(config), cacheTypes, kernels(config), SpeculativeSettings.from(config));
    }

    private static KvCacheType cacheType(BackendConfig config, String key) {
        String name = config.string(key, KvCacheType.F16.settingName());
        try {
            return KvCacheType.parse(name);
        } catch (IllegalArgumentException e) {
            throw new BackendConfigException(config.id(), key, "setting '" + key + "' must be one of "
                    + KvCacheType.names() + ", got '" + name + "'");
        }
    }

    /**
     * {@code flash-attention}: {@code off} is llama-server's {@code -fa off}; {@code on} and {@code auto} (the default)
     * its {@code -fa on}, which is what its {@code auto} picks on a CPU (Debian's b11669 logs "Flash Attention
     * enabled"). YAML reads a bare on/off as a boolean, so true/false are taken too. {@code flash-attention-threads}:
     * llama-server's {@code -t}, whose count splits a decode step's attention; default llama-server's own default, the
     * physical cores.
     */
    private static AttentionOrder attention(BackendConfig config) {
        String mode = config.string("flash-attention", "auto").trim().toLowerCase(Locale.ROOT);
        int threads = positive(config, "flash-attention-threads", HostCpu.physicalCores());
        return switch (mode) {
            case "auto", "on", "true" -> AttentionOrder.flash(threads);
            case "off", "false" -> AttentionOrder.NON_FLASH;
            default -> throw new BackendConfigException(config.id(), "flash-attention",
                    "setting 'flash-attention' must be auto, on or off, got '" + mode + "'");
        };
    }

    /** The backend's {@link KernelConfig}; without settings, the JVM's defaults ({@link KernelConfig#fromSystemProperties}). */
    private static KernelConfig kernels(BackendConfig config) {
        KernelConfig defaults = KernelConfig.fromSystemProperties();
        String kernels = config.string("kernels", defaults.kernels().name());
        String variant = config.string("ggml-variant", null);
        KernelConfig.Choice choice;
        try {
            choice = KernelConfig.of(kernels, null).kernels();
        } catch (IllegalArgumentException e) {
            throw new BackendConfigException(config.id(), "kernels", "setting 'kernels' must be auto, native or java, got '"
                    + kernels + "'");
        }
        try {
            return variant == null ? defaults.with(choice) : KernelConfig.of(kernels, variant);
        } catch (IllegalArgumentException e) {
            throw new BackendConfigException(config.id(), "ggml-variant", "setting 'ggml-variant': " + e.getMessage());
        }
    }

    private static int positive(BackendConfig config, String key, int def) {
        int v = config.integer(key, def);
        if (v < 1) {
            throw new BackendConfigException(config.id(), key, "setting '" + key + "' must be at least 1, got " + v);
        }
        return v;
    }

    private static String defaultName(String model) {
        String file = model.substring(Math.max(model.lastIndexOf('/'), model.lastIndexOf(':')) + 1);
        return file.endsWith(".gguf") ? file.substring(0, file.length() - 5) : file;
    }
}
