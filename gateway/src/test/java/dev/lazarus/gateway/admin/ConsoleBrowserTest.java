package dev.lazarus.gateway.admin;

import static dev.lazarus.gateway.admin.HeadlessChromium.await;
import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.BackendHealth;
import dev.lazarus.gateway.policy.Actor;
import dev.lazarus.gateway.policy.PolicyEngine;
import dev.lazarus.gateway.resilience.HealthMonitor;
import dev.lazarus.gateway.routing.BackendRegistry;
import dev.lazarus.gateway.testing.ScriptedBackend;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.ActiveProfiles;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The operator console in a real browser (headless Chromium): {@code /} leads a browser to it, it shows every
 * backend (a loading one with its load's progress), and a drain confirmed in the page is what the admin API then
 * reports. A screenshot is left in target/console-screenshot.png. Same context as {@link AdminReasonsTest}.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "lazarus.admin.token=admin-secret",
        "lazarus.policy.backends.alpha.role=candidate",
        "lazarus.policy.gate.max-ttft=60s"})
@ActiveProfiles("test")
class ConsoleBrowserTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @LocalServerPort
    int port;

    @Autowired
    PolicyEngine engine;

    @Autowired
    BackendRegistry backends;

    @Autowired
    HealthMonitor monitor;

    @TempDir
    Path dir;

    @AfterEach
    void undrainAndLoaded() {
        chatOnly().setHealth(BackendHealth.Status.UP);
        monitor.refresh().block(Duration.ofSeconds(5));
        if (engine.state("beta").orElseThrow().draining()) {
            engine.drain("beta", Actor.OPERATOR, false);
        }
    }

    @Test
    void theConsoleShowsEveryBackendAndADrainConfirmedInThePageReachesTheAdminApi() throws Exception {
        String base = "http://127.0.0.1:" + port;
        try (HeadlessChromium chrome = HeadlessChromium.start(Files.createDirectory(dir.resolve("profile")))) {
            chrome.navigate(base + "/");
            await(() -> "/console/".equals(chrome.eval("location.pathname").asString())
                    && "complete".equals(chrome.eval("document.readyState").asString()), "/ to lead to the console");
            chrome.eval("document.querySelector('#token').value = 'admin-secret';"
                    + " document.querySelector('#use-token').click(); true");
            List<String> ids = backends.all().stream().map(b -> b.id()).toList();
            await(() -> chrome.eval("document.querySelectorAll('tr.backend').length").asInt() == ids.size(),
                    "a row per backend");
            assertThat(JSON.readTree(chrome.eval("JSON.stringify([...document.querySelectorAll('tr.backend')]"
                    + ".map(r => r.dataset.backend))").asString()).valueStream().map(JsonNode::asString))
                    .containsExactlyInAnyOrderElementsOf(ids);
            assertThat(chrome.eval("document.querySelector('tr.backend[data-backend=alpha]').innerText").asString())
                    .contains("scripted").contains("CANDIDATE").contains("CLOSED").contains("UP");

            // a model load in progress: its percent and time left, as the admin API reports them
            chatOnly().setHealth(BackendHealth.loading("loading scripted (42 %)", 0.42, Duration.ofSeconds(21)));
            monitor.refresh().block(Duration.ofSeconds(5));
            await(() -> chrome.eval("document.querySelector('tr.backend[data-backend=chat-only]').innerText").asString()
                    .contains("42 % (about 29 s left)"), "the page to show the load's progress");
            assertThat(chrome.eval("document.querySelector('tr.backend[data-backend=chat-only] progress').value")
                    .asInt()).isEqualTo(42);

            chrome.eval("document.querySelector('tr.backend[data-backend=beta] button[data-action=drain]').click(); true");
            assertThat(chrome.eval("document.querySelector('#confirm').open").asBoolean()).as("asks first").isTrue();
            assertThat(drainingInTheAdminApi()).as("nothing before the confirmation").isFalse();
            chrome.eval("document.querySelector('#confirm-ok').click(); true");
            await(this::drainingInTheAdminApi, "the drain to reach the admin API");
            await(() -> chrome.eval("document.querySelector('tr.backend[data-backend=beta]').innerText").asString()
                    .contains("(draining)"), "the page to show the drain");
            await(() -> chrome.eval("document.querySelector('#events tbody').innerText").asString().contains("drain"),
                    "the journal to show it");

            byte[] png = chrome.screenshot();
            assertThat(png).startsWith(0x89, 'P', 'N', 'G');
            Files.write(Path.of("target/console-screenshot.png"), png);
        }
    }

    @Test
    void slashLeadsOnlyBrowsersToTheConsole() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        URI root = URI.create("http://127.0.0.1:" + port + "/");
        HttpResponse<String> browser = http.send(HttpRequest.newBuilder(root)
                .header("Accept", "text/html,application/xhtml+xml,*/*;q=0.8").build(), HttpResponse.BodyHandlers.ofString());
        assertThat(browser.statusCode()).isEqualTo(307);
        assertThat(browser.headers().firstValue("Location")).hasValue("/console/");
        assertThat(http.send(HttpRequest.newBuilder(root).header("Accept", "application/json").build(),
                HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(404);
        HttpResponse<String> page = http.send(HttpRequest.newBuilder(root.resolve("/console/")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.body()).contains("<title>Lazarus console</title>").doesNotContain("admin-secret");
    }

    private ScriptedBackend chatOnly() {
        return (ScriptedBackend) backends.find("chat-only").orElseThrow();
    }

    private boolean drainingInTheAdminApi() {
        try {
            HttpResponse<String> view = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + port + "/admin/backends/beta"))
                    .header("Authorization", "Bearer admin-secret").build(), HttpResponse.BodyHandlers.ofString());
            return JSON.readTree(view.body()).path("draining").asBoolean();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
