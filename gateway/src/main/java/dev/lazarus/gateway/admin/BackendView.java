package dev.lazarus.gateway.admin;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * One backend as {@code GET /admin/backends} shows it.
 *
 * @param id       backend id
 * @param kind     backend kind
 * @param role     {@code ORACLE} or {@code CANDIDATE}
 * @param state    policy state
 * @param reason   why it is in that state
 * @param since    when it entered it
 * @param draining finishing in-flight requests, taking no new ones
 * @param inFlight calls in progress now
 * @param breaker  its circuit breaker, or null when it has none (yet)
 * @param health   its last known health
 * @param live     live figures from real traffic, or null when there are none
 * @param models   public models whose route includes it
 * @param needs    what its model file needs, where the backend reads it (kt-native: architecture, tensor types and
 *                 what of that it cannot compute), else null
 */
public record BackendView(String id, String kind, String role, String state, String reason, Instant since,
                          boolean draining, @JsonProperty("in_flight") int inFlight, Breaker breaker, Health health,
                          Live live, List<String> models, Map<String, Object> needs) {

    /** Resilience4j's view of the breaker. Rates are percentages, -1 until enough calls were seen. */
    public record Breaker(String state,
                          @JsonProperty("failure_rate") float failureRate,
                          @JsonProperty("slow_call_rate") float slowCallRate,
                          @JsonProperty("buffered_calls") int bufferedCalls,
                          @JsonProperty("failed_calls") int failedCalls,
                          @JsonProperty("slow_calls") int slowCalls,
                          @JsonProperty("not_permitted_calls") long notPermittedCalls) {}

    /**
     * @param status  UP, LOADING, DOWN or UNKNOWN
     * @param loading how far a LOADING backend that reports its progress is, else null
     */
    public record Health(String status, String detail, Loading loading) {}

    /**
     * A model load in progress.
     *
     * @param percent    0 to 100
     * @param etaSeconds seconds it likely still takes, at its pace so far; null while unknown
     */
    public record Loading(int percent, @JsonProperty("eta_seconds") Long etaSeconds) {}

    public record Live(@JsonProperty("tokens_per_second") Double tokensPerSecond,
                       @JsonProperty("ttft_p50_ms") Long ttftP50Ms,
                       @JsonProperty("ttft_p95_ms") Long ttftP95Ms,
                       @JsonProperty("error_rate") double errorRate,
                       long calls,
                       Instant at) {}
}
