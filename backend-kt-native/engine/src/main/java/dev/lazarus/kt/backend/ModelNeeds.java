package dev.lazarus.kt.backend;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.gguf.GgufTensorInfo;
import dev.lazarus.kt.model.Architecture;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * What a GGUF needs from the engine, read from its header before any weight is touched: its architecture and the
 * tensor types it stores, and of those what this engine cannot compute, by name. The backend's preflight: a model
 * that needs what the engine lacks is refused at once with that list (health DOWN, the gateway's preflight keeps the
 * candidate DISABLED with the same words) instead of failing somewhere during a load of hundreds of GB.
 *
 * @param architecture  {@code general.architecture}
 * @param tensorTypes   tensors per type, e.g. {@code Q4_K=120}
 * @param unsupported   what the engine cannot do with this file, one line per problem; empty when it can load it
 */
public record ModelNeeds(String architecture, Map<String, Integer> tensorTypes, List<String> unsupported) {

    public ModelNeeds {
        tensorTypes = Map.copyOf(tensorTypes);
        unsupported = List.copyOf(unsupported);
    }

    /** Reads {@code model}'s header (all split parts). */
    public static ModelNeeds of(Path model) {
        try (GgufFile file = GgufFile.open(model)) {
            return of(file);
        }
    }

    /** What {@code file} needs. */
    public static ModelNeeds of(GgufFile file) {
        String arch = file.string("general.architecture", "(none)");
        List<String> unsupported = new ArrayList<>();
        if (Arrays.stream(Architecture.values()).noneMatch(a -> a.ggufName().equalsIgnoreCase(arch))) {
            unsupported.add("unsupported architecture: " + arch + " (supported: "
                    + Arrays.stream(Architecture.values()).map(Architecture::ggufName).collect(Collectors.joining(", ")) + ")");
        }
        Map<String, Integer> types = new TreeMap<>();
        Map<GgmlType, Map<String, Integer>> missing = new TreeMap<>();
        for (GgufTensorInfo t : file.tensors()) {
            types.merge(t.type().name(), 1, Integer::sum);
            if (!t.type().computable()) {
                missing.computeIfAbsent(t.type(), k -> new TreeMap<>()).merge(pattern(t.name()), 1, Integer::sum);
            }
        }
        if (!missing.isEmpty()) {
            unsupported.add("unsupported tensor types: " + missing.entrySet().stream()
                    .map(e -> e.getKey() + " (" + describe(e.getValue()) + ")").collect(Collectors.joining("; ")));
        }
        return new ModelNeeds(arch, types, unsupported);
    }

    /** The reason the engine cannot load this file, or empty when it can. */
    public Optional<String> refusal() {
        return unsupported.isEmpty() ? Optional.empty() : Optional.of(String.join("; ", unsupported));
    }

    /** The facts for {@code /v1/models} and the admin view: architecture, tensor types, what is unsupported. */
    public Map<String, Object> facts() {
        Map<String, Object> facts = new LinkedHashMap<>();
        facts.put("architecture", architecture);
        facts.put("tensor_types", tensorTypes);
        facts.put("unsupported", unsupported);
        return facts;
    }

    /** {@code blk.17.ffn_down_exps.weight} → {@code blk.*.ffn_down_exps.weight}: one name for all layers. */
    static String pattern(String tensor) {
        return tensor.replaceFirst("^blk\\.\\d+\\.", "blk.*.");
    }

    /** "blk.*.ffn_down_exps.weight, 24 tensors" (the most frequent names first, at most three, then the rest counted). */
    private static String describe(Map<String, Integer> byPattern) {
        int total = byPattern.values().stream().mapToInt(Integer::intValue).sum();
        List<String> names = byPattern.entrySet().stream()
                .sorted(Map.Entry.<String, Integer>comparingByValue().reversed().thenComparing(Map.Entry.comparingByKey()))
                .map(Map.Entry::getKey).toList();
        TreeSet<String> shown = new TreeSet<>(names.subList(0, Math.min(3, names.size())));
        String more = names.size() > shown.size() ? " and " + (names.size() - shown.size()) + " more" : "";
        return String.join(", ", shown) + more + ", " + total + (total == 1 ? " tensor" : " tensors");
    }
}
