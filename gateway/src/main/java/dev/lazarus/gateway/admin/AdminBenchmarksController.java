package dev.lazarus.gateway.admin;

import dev.lazarus.gateway.api.ApiError;
import dev.lazarus.gateway.policy.UnknownBackendException;
import dev.lazarus.gateway.policy.gate.BenchmarkJob;
import dev.lazarus.gateway.policy.gate.BenchmarkJobs;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.tags.Tag;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** The decision gate: benchmark jobs on a candidate and its oracle, and their verdicts. */
@RestController
@Tag(name = "benchmarks")
class AdminBenchmarksController {

    private static final int MAX_RUNS = 50;

    private final BenchmarkJobs jobs;
    private final AdminRequests requests;
    private final JsonMapper json;

    AdminBenchmarksController(BenchmarkJobs jobs, AdminRequests requests, JsonMapper json) {
        this.jobs = jobs;
        this.requests = requests;
        this.json = json;
    }

    /**
     * Body {@code {"candidate": "id", "runs": 3, "extra": {...}}}; {@code runs} (1-50) and
     * {@code extra} (fields added to every benchmark request) are optional.
     */
    @PostMapping("/admin/benchmarks")
    @Operation(summary = "Start a decision-gate job: 202 with the job; poll GET /admin/benchmarks/{id}")
    ResponseEntity<BenchmarkJob> submit(@RequestBody(required = false) String body) {
        JsonNode request = requests.object(body);
        String candidate = AdminRequests.optionalString(request, "candidate");
        if (candidate == null || candidate.isBlank()) {
            throw ApiError.invalidRequest("'candidate' (a backend id) is required.", "candidate");
        }
        Integer runs = null;
        JsonNode runsNode = request.get("runs");
        if (runsNode != null && !runsNode.isNull()) {
            if (!runsNode.isIntegralNumber() || runsNode.asLong() < 1 || runsNode.asLong() > MAX_RUNS) {
                throw ApiError.invalidValue("'runs' must be an integer from 1 to " + MAX_RUNS + ".", "runs");
            }
            runs = runsNode.asInt();
        }
        Map<String, Object> extra = new LinkedHashMap<>();
        JsonNode extraNode = request.get("extra");
        if (extraNode != null && !extraNode.isNull()) {
            if (!extraNode.isObject()) {
                throw ApiError.invalidRequest("'extra' must be an object.", "extra");
            }
            extra.putAll(json.convertValue(extraNode, Map.class));
        }
        try {
            return ResponseEntity.status(HttpStatus.ACCEPTED).body(jobs.submit(candidate, runs, extra));
        } catch (UnknownBackendException e) {
            throw ApiError.invalidValue(e.getMessage(), "candidate");
        } catch (IllegalArgumentException e) {
            throw ApiError.invalidValue(e.getMessage(), "candidate");
        }
    }

    @GetMapping("/admin/benchmarks")
    @Operation(summary = "The decision-gate jobs this gateway ran or runs (the last ones kept), newest first")
    Map<String, List<BenchmarkJob>> list() {
        return Map.of("data", jobs.all());
    }

    @GetMapping("/admin/benchmarks/{id}")
    @Operation(summary = "A job: progress; when done, per-prompt figures, averages ± stdev, agreement with the oracle, verdict and reasons")
    BenchmarkJob get(@PathVariable String id) {
        return jobs.find(id).orElseThrow(() -> new ApiError(HttpStatus.NOT_FOUND, "invalid_request_error",
                "not_found", "id", "There is no benchmark job '" + id + "'."));
    }
}
