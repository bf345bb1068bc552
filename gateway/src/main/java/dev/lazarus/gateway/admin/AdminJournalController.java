package dev.lazarus.gateway.admin;

import com.fasterxml.jackson.annotation.JsonProperty;
import dev.lazarus.gateway.api.ApiError;
import dev.lazarus.gateway.policy.AuditEvent;
import dev.lazarus.gateway.policy.PolicyEngine;
import dev.lazarus.gateway.policy.PolicyStore;
import dev.lazarus.gateway.policy.Role;
import dev.lazarus.gateway.policy.preflight.HardwareProbe;
import dev.lazarus.gateway.policy.preflight.HardwareProfile;
import dev.lazarus.gateway.policy.preflight.Preflight;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.tags.Tag;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** The audit journal and the hardware probe. */
@RestController
@Tag(name = "journal and hardware")
class AdminJournalController {

    private static final int MAX_PAGE_SIZE = 500;

    /**
     * @param page  0-based page, newest events first
     * @param size  events per page
     * @param total events in the journal
     */
    record EventPage(String object, List<AuditEvent> data, long page, int size, long total) {}

    /** @param preflight per candidate: whether it passes on this machine, and why */
    record HardwareView(@JsonProperty("cpu_vendor") String cpuVendor, @JsonProperty("cpu_model") String cpuModel,
                        @JsonProperty("policy_flags") List<String> policyFlags,
                        @JsonProperty("logical_cpus") int logicalCpus, @JsonProperty("numa_nodes") int numaNodes,
                        @JsonProperty("ram_bytes") long ramBytes, @JsonProperty("vram_bytes") long vramBytes,
                        List<HardwareProfile.Gpu> gpus, List<String> notes,
                        Map<String, Preflight.Outcome> preflight) {}

    private final PolicyStore store;
    private final HardwareProbe probe;
    private final Preflight preflight;
    private final PolicyEngine engine;

    AdminJournalController(PolicyStore store, HardwareProbe probe, Preflight preflight, PolicyEngine engine) {
        this.store = store;
        this.probe = probe;
        this.preflight = preflight;
        this.engine = engine;
    }

    @GetMapping("/admin/events")
    @Operation(summary = "The audit journal, newest first: every transition with who, why and the figures")
    EventPage events(@RequestParam(required = false) String page, @RequestParam(required = false) String size) {
        long p = number(page, "page", 0, Long.MAX_VALUE / MAX_PAGE_SIZE, 0);
        int s = (int) number(size, "size", 1, MAX_PAGE_SIZE, 50);
        return new EventPage("list", store.newestEvents(p * s, s), p, s, store.eventCount());
    }

    @GetMapping("/admin/hardware")
    @Operation(summary = "What the probe found (CPU flags, cores, NUMA nodes, RAM, GPUs) and each candidate's preflight")
    HardwareView hardware() {
        HardwareProfile hw = probe.profile();
        Map<String, Preflight.Outcome> outcomes = new LinkedHashMap<>();
        engine.states().stream().filter(s -> s.role() == Role.CANDIDATE)
                .forEach(s -> outcomes.put(s.backendId(), preflight.check(s.backendId())));
        return new HardwareView(hw.cpuVendor(), hw.cpuModel(), hw.policyFlags(), hw.logicalCpus(), hw.numaNodes(),
                hw.ramBytes(), hw.vramBytes(), hw.gpus(), hw.notes(), outcomes);
    }

    private static long number(String text, String param, long min, long max, long fallback) {
        if (text == null || text.isBlank()) {
            return fallback;
        }
        try {
            long value = Long.parseLong(text.trim());
            if (value >= min && value <= max) {
                return value;
            }
        } catch (NumberFormatException e) {
            // answered below
        }
        throw ApiError.invalidValue("'" + param + "' must be an integer from " + min + " to " + max + ".", param);
    }
}
