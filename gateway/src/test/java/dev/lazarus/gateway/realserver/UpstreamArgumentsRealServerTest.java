package dev.lazarus.gateway.realserver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.gateway.LazarusGatewayApplication;
import dev.lazarus.gateway.launch.UpstreamArguments;
import dev.lazarus.kt.testsupport.LlamaServerProcess;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code --upstream URL --model NAME --upstream-api-key KEY} in front of a real llama-server that wants that key: the
 * gateway starts from those arguments alone and answers the public model with what llama-server itself answers the
 * same greedy request with, streamed and not.
 */
@Tag("llama-server")
class UpstreamArgumentsRealServerTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final String KEY = "upstream-test-key";
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @TempDir
    Path dir;

    @AfterAll
    static void stopServers() {
        RealLlamaServers.stopAll();
    }

    @Test
    void aChatThroughTheGatewayIsAnsweredByTheUpstreamWithItsOwnContent() throws Exception {
        LlamaServerProcess upstream = RealLlamaServers.startParallel(1, RealLlamaServers.CONTEXT, "--api-key", KEY);
        String body = """
                {"model":"%s","messages":[{"role":"user","content":"Tell me about the sea."}],
                 "max_tokens":12,"temperature":0,"seed":1%s}""";
        // what llama-server answers itself (it ignores the model name)
        JsonNode direct = JSON.readTree(post(upstream.url().resolve("/v1/chat/completions"), KEY,
                body.formatted("any", "")).body());
        String expected = direct.at("/choices/0/message/content").asString();
        assertThat(expected).as("llama-server answered: %s", direct).isNotEmpty();

        String[] args = UpstreamArguments.expand(new String[] {"--upstream", upstream.url().toString(),
                "--model", "sea-model", "--upstream-api-key", KEY, "--server.port=0",
                "--lazarus.policy.store-path=" + dir});
        try (ConfigurableApplicationContext context = SpringApplication.run(LazarusGatewayApplication.class, args)) {
            URI gateway = URI.create("http://127.0.0.1:" + context.getEnvironment().getProperty("local.server.port"));

            JsonNode models = JSON.readTree(HTTP.send(HttpRequest.newBuilder(gateway.resolve("/v1/models"))
                    .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString()).body());
            assertThat(models.path("data").valueStream().map(m -> m.path("id").asString()))
                    .containsExactly("sea-model");

            HttpResponse<String> answer = post(gateway.resolve("/v1/chat/completions"), null,
                    body.formatted("sea-model", ""));
            assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
            JsonNode chat = JSON.readTree(answer.body());
            assertThat(chat.at("/choices/0/message/content").asString()).isEqualTo(expected);
            assertThat(chat.at("/choices/0/finish_reason").asString()).isEqualTo("length");
            assertThat(chat.at("/usage/completion_tokens").asInt()).isEqualTo(12);
            // llama-server's own field, passed through: it was llama-server that answered
            assertThat(chat.at("/timings/predicted_n").asInt()).isEqualTo(12);

            HttpResponse<String> stream = post(gateway.resolve("/v1/chat/completions"), null,
                    body.formatted("sea-model", ",\"stream\":true"));
            assertThat(stream.statusCode()).as(stream.body()).isEqualTo(200);
            List<String> events = SseEvents.parse(stream.body());
            assertThat(events.getLast()).isEqualTo("[DONE]");
            assertThat(events.subList(0, events.size() - 1).stream().map(JSON::readTree)
                    .map(c -> c.at("/choices/0/delta/content").asString(""))
                    .collect(Collectors.joining())).isEqualTo(expected);
        }
    }

    private static HttpResponse<String> post(URI uri, String key, String json)
            throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json));
        if (key != null) {
            request.header("Authorization", "Bearer " + key);
        }
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
