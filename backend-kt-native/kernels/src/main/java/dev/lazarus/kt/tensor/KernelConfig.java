package dev.lazarus.kt.tensor;

import java.util.Locale;
import java.util.Optional;

/**
 * Which kernels a backend's matrices take: its settings {@code kernels} ({@link Choice}) and {@code ggml-variant}
 * (the llama.cpp CPU variant whose summation orders the Java kernels take, {@link GgmlOrders}). A value made once per
 * backend and handed down through model loading, so two backends of one gateway may differ.
 *
 * @param kernels native or Java kernels
 * @param orders  the ggml variant's orders, where they differ between variants (the BF16 dot product)
 */
public record KernelConfig(Choice kernels, GgmlOrders orders) {

    /** System property naming the kernel set of {@link #fromSystemProperties}: {@code auto}, {@code native}, {@code java}. */
    public static final String KERNELS_PROPERTY = "lazarus.kt.kernels";
    /** System property naming the ggml variant of {@link #fromSystemProperties}: {@code zen4}, {@code skylakex}, ... */
    public static final String VARIANT_PROPERTY = "lazarus.kt.ggml-variant";

    /** The kernel set. */
    public enum Choice {
        /** The native kernels where the library loads and the CPU runs one of its units, else the Java ones. */
        AUTO,
        /** As {@link #AUTO}, but a backend fails to load where the native kernels cannot run. */
        NATIVE,
        /** The Java Vector API kernels everywhere (the portable path and the readable reference). */
        JAVA
    }

    public KernelConfig {
        if (kernels == null || orders == null) {
            throw new IllegalArgumentException("a kernel configuration needs a kernel set and ggml orders");
        }
    }

    /** The default: native kernels where they run, the host's ggml orders. */
    public static KernelConfig auto() {
        return new KernelConfig(Choice.AUTO, GgmlOrders.forHost());
    }

    /**
     * From a backend's settings: {@code kernels} {@code auto|native|java} and {@code ggmlVariant} ({@code auto} or a
     * variant's name, {@link GgmlOrders#forVariant}); null or blank is {@code auto}.
     *
     * @throws IllegalArgumentException naming the value that is not one of these
     */
    public static KernelConfig of(String kernels, String ggmlVariant) {
        return new KernelConfig(choice(kernels), orders(ggmlVariant));
    }

    /**
     * From {@value #KERNELS_PROPERTY} and {@value #VARIANT_PROPERTY}, read at each call: the default of tests,
     * benchmarks and tools that load a model without a backend's settings. The engine reads them nowhere else.
     */
    public static KernelConfig fromSystemProperties() {
        return of(System.getProperty(KERNELS_PROPERTY), System.getProperty(VARIANT_PROPERTY));
    }

    /** This configuration with another kernel set. */
    public KernelConfig with(Choice choice) {
        return new KernelConfig(choice, orders);
    }

    /** This configuration with other ggml orders. */
    public KernelConfig with(GgmlOrders other) {
        return new KernelConfig(kernels, other);
    }

    /**
     * The instruction set the native kernels run on under this configuration, or empty where the Java kernels run.
     *
     * @throws IllegalStateException for {@link Choice#NATIVE} where the native kernels cannot run here, with the reason
     */
    public Optional<NativeKernels.Isa> nativeIsa() {
        return switch (kernels) {
            case JAVA -> Optional.empty();
            case AUTO -> NativeKernels.best();
            case NATIVE -> {
                if (NativeKernels.best().isEmpty()) {
                    throw new IllegalStateException("kernels: native, but " + NativeKernels.unavailableReason());
                }
                yield NativeKernels.best();
            }
        };
    }

    /** Whether matrices made under this configuration take native kernels where they have one. */
    public boolean nativeSelected() {
        return nativeIsa().isPresent();
    }

    private static Choice choice(String setting) {
        String s = setting == null ? "" : setting.trim().toLowerCase(Locale.ROOT);
        return switch (s) {
            case "", "auto" -> Choice.AUTO;
            case "native" -> Choice.NATIVE;
            case "java" -> Choice.JAVA;
            default -> throw new IllegalArgumentException("kernels '" + setting + "': expected auto, native or java");
        };
    }

    private static GgmlOrders orders(String setting) {
        return setting == null || setting.isBlank() || setting.trim().equalsIgnoreCase("auto")
                ? GgmlOrders.forHost() : GgmlOrders.forVariant(setting);
    }
}
