package dev.lazarus.gateway.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.MediaType;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * docker/monitoring: every metric the Grafana dashboard and the Prometheus alert rules query is one a running
 * gateway exports (scraped after the traffic that makes each appear: calls, a failover, a resumed stream), and
 * promtool accepts the rules. In CI (.ci/run installs Debian's prometheus package) a missing promtool fails.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@ActiveProfiles("test")
@AutoConfigureWebTestClient
class MonitoringAssetsTest {

    private static final Path MONITORING = Path.of(System.getenv().getOrDefault("LAZARUS_PROJECT_ROOT", ".."))
            .resolve("docker/monitoring");
    private static final Pattern METRIC = Pattern.compile("\\b((?:lazarus|resilience4j)_[a-z0-9_]+)");
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @Autowired
    WebTestClient client;

    @Test
    void everyMetricTheDashboardAndTheRulesQueryIsExported() throws Exception {
        Set<String> queried = new TreeSet<>();
        JsonNode dashboard = JSON.readTree(MONITORING.resolve("grafana/dashboards/lazarus.json").toFile());
        assertThat(dashboard.path("panels").size()).isGreaterThanOrEqualTo(10);
        for (JsonNode panel : dashboard.path("panels")) {
            for (JsonNode target : panel.path("targets")) {
                queried.addAll(metrics(target.path("expr").asString()));
            }
        }
        Set<String> inRules = metrics(Files.readString(MONITORING.resolve("alerts.yml")));
        assertThat(inRules).contains("lazarus_backend_up", "resilience4j_circuitbreaker_state",
                "lazarus_backend_state", "lazarus_backend_calls_total", "lazarus_backend_ttft_seconds_bucket");
        queried.addAll(inRules);

        traffic();
        Set<String> exported = new TreeSet<>();
        client.get().uri("/actuator/prometheus").exchange().expectStatus().isOk().expectBody(String.class)
                .returnResult().getResponseBody().lines().filter(l -> !l.startsWith("#") && !l.isBlank())
                .map(l -> l.split("[{ ]", 2)[0]).forEach(exported::add);
        assertThat(exported).containsAll(queried);
    }

    @Test
    void promtoolAcceptsTheAlertRules() throws Exception {
        Path promtool = Stream.of("/usr/bin/promtool", "/usr/local/bin/promtool").map(Path::of)
                .filter(Files::isExecutable).findFirst().orElse(null);
        if (promtool == null) {
            if ("true".equals(System.getenv("CI"))) {
                fail("promtool is missing: .ci/run installs Debian's prometheus package");
            }
            assumeTrue(false, "promtool is not installed (apt-get install prometheus)");
        }
        Path out = Files.createTempFile("promtool", ".out");
        Process check = new ProcessBuilder(promtool.toString(), "check", "rules", MONITORING.resolve("alerts.yml").toString())
                .redirectErrorStream(true).redirectOutput(out.toFile()).start();
        assertThat(check.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(check.exitValue()).as(Files.readString(out)).isZero();
        assertThat(Files.readString(out)).contains("SUCCESS: 5 rules found");
    }

    private static Set<String> metrics(String expression) {
        Set<String> names = new TreeSet<>();
        Matcher m = METRIC.matcher(expression);
        while (m.find()) {
            names.add(m.group(1));
        }
        return names;
    }

    /** A call, a failover before the first token and a stream resumed on the next backend. */
    private void traffic() {
        chat("test-model", false, "{\"alpha\": {\"fail\": \"UNAVAILABLE\"}}");
        chat("resume-model", true, "{\"alpha\": {\"fail\": \"UPSTREAM\", \"fail_after\": 1}}");
    }

    private void chat(String model, boolean stream, String script) {
        client.mutate().responseTimeout(Duration.ofSeconds(30)).build().post().uri("/v1/chat/completions")
                .header("Authorization", "Bearer test-key-1").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"model\":\"" + model + "\",\"stream\":" + stream + ",\"messages\":[{\"role\":\"user\","
                        + "\"content\":\"hi\"}],\"script\":" + script + "}")
                .exchange().expectStatus().isOk().expectBody(String.class).returnResult();
    }
}
