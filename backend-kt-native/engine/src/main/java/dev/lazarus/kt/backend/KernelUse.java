package dev.lazarus.kt.backend;

import dev.lazarus.kt.tensor.KernelConfig;
import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.gguf.GgufTensorInfo;
import dev.lazarus.kt.matrix.Kernels;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * The {@code /v1/models} {@code kernels} label: which kernels multiply which of a model's weight types here, e.g.
 * {@code native-avx512-vnni: Q6_K,Q8_0; java-vector-256: F32,F16}, native first. The native kernels cover only some
 * types, so naming them alone would claim them for models (the embedded F16 default) none of whose weights they run.
 */
final class KernelUse {

    private KernelUse() {
    }

    /** The label for the matrices among {@code tensors} (rank 2, or 3 for stacked experts: one matrix per expert). */
    static String describe(List<GgufTensorInfo> tensors, KernelConfig config) {
        Map<String, Set<GgmlType>> typesByKernels = new TreeMap<>(Comparator.reverseOrder()); // "native-…" before "java-…"
        for (GgufTensorInfo t : tensors) {
            if (t.rank() >= 2) {
                typesByKernels.computeIfAbsent(Kernels.of(t.type(), (int) t.dim(1), (int) t.dim(0), config),
                        k -> EnumSet.noneOf(GgmlType.class)).add(t.type());
            }
        }
        return typesByKernels.entrySet().stream()
                .map(e -> e.getKey() + ": " + e.getValue().stream().map(GgmlType::name).collect(Collectors.joining(",")))
                .collect(Collectors.joining("; "));
    }
}
