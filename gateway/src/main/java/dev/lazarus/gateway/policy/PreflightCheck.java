package dev.lazarus.gateway.policy;

import java.util.Map;

/** Whether a candidate may leave {@code DISABLED} on this machine; see the preflight package. */
@FunctionalInterface
public interface PreflightCheck {

    Outcome check(String backendId);

    /**
     * @param passed  whether the candidate fits the machine
     * @param reason  what was checked, or what is missing (the flag, the byte counts)
     * @param figures the numbers behind it, for the audit journal
     */
    record Outcome(boolean passed, String reason, Map<String, Object> figures) {

        public Outcome {
            figures = figures == null ? Map.of() : Map.copyOf(figures);
        }
    }

    static PreflightCheck alwaysPasses() {
        return id -> new Outcome(true, "no preflight configured", Map.of());
    }
}
