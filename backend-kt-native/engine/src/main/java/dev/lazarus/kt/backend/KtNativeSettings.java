package dev.lazarus.kt.backend;

import dev.lazarus.kt.tensor.KernelConfig;
import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendConfigException;
import dev.lazarus.kt.placement.PlacementConfig;

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
 * @param kernels        which kernels its matrices take: settings {@code kernels} ({@code auto|native|java}) and
 *                       {@code ggml-variant} ({@code auto} or a llama.cpp CPU variant whose summation orders to take)
 */
public record KtNativeSettings(String model, int threads, int contextSize, int maxSequences, int maxQueued,
                               String modelName, PlacementConfig placement, int warmupTokens, KernelConfig kernels) {

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
        return new KtNativeSettings(model, threads, context, sequences, queued, name, PlacementConfig.from(config), warmup,
                kernels(config));
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
