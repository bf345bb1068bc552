package dev.lazarus.gateway.testing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.gateway.routing.BackendRegistry;
import java.util.ArrayList;
import java.util.List;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.MediaType;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Base of the tests that run against the real server on a random port. Every subclass shares one
 * application context (same annotations, same properties): configuration in application-test.yml.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@ActiveProfiles("test")
@AutoConfigureWebTestClient
public abstract class GatewayTestSupport {

    protected static final String API_KEY = "test-key-1";
    protected static final JsonMapper JSON = JsonMapper.builder().build();

    @Autowired
    protected WebTestClient client;

    @LocalServerPort
    protected int port;

    @Autowired
    private BackendRegistry backends;

    /** This context's scripted backend with that id. */
    protected ScriptedBackend backend(String id) {
        return (ScriptedBackend) backends.find(id).orElseThrow();
    }

    protected WebTestClient.ResponseSpec post(String path, String body) {
        return client.post().uri(path)
                .header("Authorization", "Bearer " + API_KEY)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(body)
                .exchange();
    }

    protected static JsonNode json(String text) {
        return JSON.readTree(text);
    }

    /**
     * The data of a stream of named events (Responses, Anthropic Messages), checking the framing: each event an
     * {@code event:} line and a {@code data:} line whose {@code type} is the event's name.
     */
    protected static List<JsonNode> namedEvents(String body) {
        assertThat(body).endsWith("\n\n");
        List<JsonNode> events = new ArrayList<>();
        for (String event : body.split("\n\n")) {
            String[] lines = event.split("\n");
            assertThat(lines).hasSize(2);
            assertThat(lines[0]).startsWith("event: ");
            assertThat(lines[1]).startsWith("data: ");
            JsonNode data = json(lines[1].substring("data: ".length()));
            assertThat(data.get("type").asString()).isEqualTo(lines[0].substring("event: ".length()));
            events.add(data);
        }
        return events;
    }

    /** Splits an event-stream body into its {@code data:} payloads, checking the exact framing. */
    protected static List<String> events(String body) {
        List<String> events = new ArrayList<>();
        for (String event : body.split("\n\n", -1)) {
            if (event.isEmpty()) {
                continue;
            }
            if (!event.startsWith("data: ") || event.contains("\n")) {
                throw new AssertionError("not an OpenAI SSE event: '" + event + "' in " + body);
            }
            events.add(event.substring("data: ".length()));
        }
        if (!body.endsWith("\n\n")) {
            throw new AssertionError("stream does not end with a blank line: " + body);
        }
        return events;
    }
}
