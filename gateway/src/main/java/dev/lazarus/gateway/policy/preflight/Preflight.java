package dev.lazarus.gateway.policy.preflight;

import dev.lazarus.gateway.policy.KtMethod;
import dev.lazarus.gateway.policy.PreflightCheck;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The checks a candidate must pass before it may leave {@code DISABLED}: the CPU has what the
 * candidate's method needs, and the model (with its KV caches, where the backend reports them) fits in RAM + VRAM
 * minus a headroom (the memory wall:
 * a model larger than that does not fail, it swaps at seconds per token).
 */
public final class Preflight implements PreflightCheck {

    /**
     * What a candidate needs.
     *
     * @param method      how it runs its weights
     * @param modelBytes  the size of its weights, when known
     * @param kvCacheBytes what its KV caches may grow to (context times sequences at the configured cache types),
     *                    when known: counted in the memory wall beside the weights
     * @param unsupported what the backend itself reports it cannot do with its model (an architecture, tensor types;
     *                    {@link dev.lazarus.backend.api.ModelInfo#UNSUPPORTED}), when it reports anything
     */
    public record Requirement(KtMethod method, OptionalLong modelBytes, OptionalLong kvCacheBytes,
                              Optional<String> unsupported) {

        public Requirement(KtMethod method, OptionalLong modelBytes, Optional<String> unsupported) {
            this(method, modelBytes, OptionalLong.empty(), unsupported);
        }

        public Requirement(KtMethod method, OptionalLong modelBytes) {
            this(method, modelBytes, Optional.empty());
        }
    }

    private final Supplier<HardwareProfile> hardware;
    private final Function<String, Requirement> requirements;
    private final long headroomBytes;

    public Preflight(Supplier<HardwareProfile> hardware, Function<String, Requirement> requirements, long headroomBytes) {
        this.hardware = hardware;
        this.requirements = requirements;
        this.headroomBytes = headroomBytes;
    }

    @Override
    public Outcome check(String backendId) {
        return evaluate(hardware.get(), requirements.apply(backendId), headroomBytes);
    }

    /** The verdict for one requirement on one machine; pure. */
    public static Outcome evaluate(HardwareProfile hw, Requirement requirement, long headroomBytes) {
        Map<String, Object> figures = new LinkedHashMap<>();
        KtMethod method = requirement.method();
        figures.put("method", method.name());
        figures.put("cpu", hw.cpuModel());
        figures.put("ram_bytes", hw.ramBytes());
        figures.put("vram_bytes", hw.vramBytes());
        figures.put("headroom_bytes", headroomBytes);

        if (requirement.unsupported().isPresent()) {
            figures.put("unsupported", requirement.unsupported().get());
            return new Outcome(false, "the backend cannot serve its model: " + requirement.unsupported().get(), figures);
        }

        List<String> missing = method.missingFlags(hw.flags());
        if (!missing.isEmpty()) {
            figures.put("missing_flags", missing);
            return new Outcome(false, "method " + method + " needs " + method.describeNeeds() + "; this CPU ("
                    + hw.cpuVendor() + " " + hw.cpuModel() + ") lacks " + String.join(", ", missing)
                    + (hw.flags().isEmpty() ? " (its flags could not be read: " + hw.notes() + ")" : ""), figures);
        }
        String cpuPart = method == KtMethod.NONE ? "no CPU requirement"
                : "method " + method + " supported (" + method.describeNeeds() + ")";

        if (requirement.modelBytes().isEmpty()) {
            return new Outcome(true, cpuPart + "; model size unknown, memory wall not checked", figures);
        }
        long model = requirement.modelBytes().getAsLong();
        figures.put("model_bytes", model);
        if (hw.ramBytes() <= 0) {
            return new Outcome(false, "cannot check the memory wall for a model of " + bytes(model)
                    + ": RAM size unknown " + hw.notes(), figures);
        }
        long budget = hw.ramBytes() + hw.vramBytes() - headroomBytes;
        figures.put("budget_bytes", budget);
        long kv = requirement.kvCacheBytes().orElse(0);
        String kvPart = "";
        if (requirement.kvCacheBytes().isPresent()) {
            figures.put("kv_cache_bytes", kv);
            kvPart = " + KV cache " + bytes(kv);
        }
        if (model + kv > budget) {
            return new Outcome(false, "model needs " + bytes(model) + kvPart + " but the memory budget is "
                    + bytes(budget)
                    + " (RAM " + bytes(hw.ramBytes()) + " + VRAM " + bytes(hw.vramBytes()) + " - headroom "
                    + bytes(headroomBytes) + ")", figures);
        }
        return new Outcome(true, cpuPart + "; model " + bytes(model) + kvPart + " fits the memory budget of "
                + bytes(budget),
                figures);
    }

    /** "624.0 GiB (670014898176 bytes)": readable and exact. */
    static String bytes(long value) {
        return String.format(Locale.ROOT, "%.1f GiB (%d bytes)", value / (1024.0 * 1024 * 1024), value);
    }
}
