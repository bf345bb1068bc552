package dev.lazarus.gateway.realserver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.testsupport.LlamaServerProcess;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A real llama-server behind a proxy that holds its answer back, as a server reading a long prompt on a CPU does:
 * the gateway begins the client's stream after the ping interval (Messages: {@code message_start} and a
 * {@code ping} every interval; Responses: {@code response.created}, {@code response.in_progress} and SSE comments)
 * and the answer, when it comes, goes on in it: passed through from the server's own endpoint or translated. A
 * server that dies while reading the prompt hands the request to the next backend, and the client still gets one
 * well-formed message or response.
 */
@Tag("llama-server")
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "lazarus.messages.ping-interval=200ms", "lazarus.responses.keep-alive-interval=200ms",
        // the dying backend stays UP until the call finds it dead
        "lazarus.health.interval=10m"})
class PrefillKeepAliveRealServerTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final long HOLD_MS = 2500;
    private static final String MESSAGE = """
            {"model": "%s", "max_tokens": 8, "temperature": 0, "stream": true,
             "messages": [{"role": "user", "content": "Name a river."}]}
            """;
    private static final String RESPONSE = """
            {"model": "%s", "max_output_tokens": 8, "temperature": 0, "stream": true, "store": false,
             "input": "Name a river."}
            """;

    static LlamaServerProcess server;
    static CuttingProxy slow;
    static CuttingProxy dying;

    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) {
        server = RealLlamaServers.start();
        slow = new CuttingProxy(server.url());
        dying = new CuttingProxy(server.url());
        RealLlamaServers.backend(registry, 0, "slow-native", slow.url().toString());
        registry.add("lazarus.backends[0].settings.messages", () -> "native");
        registry.add("lazarus.backends[0].settings.responses", () -> "native");
        RealLlamaServers.backend(registry, 1, "slow-xlate", slow.url().toString());
        registry.add("lazarus.backends[1].settings.messages", () -> "translate");
        registry.add("lazarus.backends[1].settings.responses", () -> "translate");
        RealLlamaServers.backend(registry, 2, "dying", dying.url().toString());
        registry.add("lazarus.backends[2].settings.messages", () -> "native");
        registry.add("lazarus.backends[2].settings.responses", () -> "native");
        RealLlamaServers.backend(registry, 3, "xlate", server.url().toString());
        registry.add("lazarus.backends[3].settings.messages", () -> "translate");
        registry.add("lazarus.backends[3].settings.responses", () -> "translate");
        RealLlamaServers.route(registry, 0, "tiny-slow-native", "slow-native");
        RealLlamaServers.route(registry, 1, "tiny-slow-xlate", "slow-xlate");
        RealLlamaServers.route(registry, 2, "tiny-failover", "dying", "xlate");
    }

    @AfterAll
    static void stop() {
        slow.close();
        dying.close();
        RealLlamaServers.stopAll();
    }

    @AfterEach
    void release() {
        slow.holdMillis.set(0);
        dying.holdMillis.set(0);
        dying.dropAfterHold.set(false);
    }

    @LocalServerPort
    int port;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void aMessagesStreamBeginsAndPingsWhileTheServerReadsThePrompt() throws Exception {
        String direct = text(post(server.url() + "/v1/messages", MESSAGE.formatted("any")).events);
        slow.holdMillis.set(HOLD_MS);
        for (String model : List.of("tiny-slow-native", "tiny-slow-xlate")) {
            Stream stream = post(gateway() + "/v1/messages", MESSAGE.formatted(model));
            List<String> names = names(stream.events);
            assertThat(names).as(model + ": " + stream.body).startsWith("message_start", "ping", "ping", "ping")
                    .endsWith("message_delta", "message_stop").doesNotContain("error");
            assertThat(names.stream().filter("message_start"::equals)).hasSize(1);
            assertThat(names.subList(0, names.indexOf("content_block_start")).stream().filter("ping"::equals).count())
                    .as("pings before the first token").isGreaterThanOrEqualTo(3);
            assertThat(stream.answerAfterHeadersMillis).as("the headers came while the server read the prompt")
                    .isGreaterThan(HOLD_MS / 2);
            assertThat(text(stream.events)).isEqualTo(direct);
            JsonNode delta = stream.events.get(names.lastIndexOf("message_delta"));
            assertThat(delta.at("/data/usage/output_tokens").asInt()).isPositive();
            // the prompt's usage, which a native server tells in its message_start, in message_delta
            assertThat(delta.at("/data/usage/input_tokens").asInt()
                    + delta.at("/data/usage/cache_read_input_tokens").asInt()).as(model).isPositive();
        }
    }

    @Test
    void aMessagesStreamBegunBeforeTheServerDiedGoesOnOnTheNextBackendAsOneMessage() throws Exception {
        String direct = text(post(server.url() + "/v1/messages", MESSAGE.formatted("any")).events);
        dying.holdMillis.set(HOLD_MS);
        dying.dropAfterHold.set(true);
        int dropsBefore = dying.drops.get();
        Stream stream = post(gateway() + "/v1/messages", MESSAGE.formatted("tiny-failover"));
        List<String> names = names(stream.events);
        assertThat(dying.drops.get()).isGreaterThan(dropsBefore);
        assertThat(names).as(stream.body).startsWith("message_start", "ping", "ping", "ping")
                .endsWith("content_block_stop", "message_delta", "message_stop").doesNotContain("error");
        assertThat(names.stream().filter("message_start"::equals)).hasSize(1);
        assertThat(names.stream().filter("content_block_start"::equals)).hasSize(1);
        assertThat(text(stream.events)).isEqualTo(direct);
    }

    @Test
    void aResponsesStreamOpensAndStaysAliveWhileTheServerReadsThePrompt() throws Exception {
        String direct = outputText(post(server.url() + "/v1/responses", RESPONSE.formatted("any")).events);
        slow.holdMillis.set(HOLD_MS);
        for (String model : List.of("tiny-slow-native", "tiny-slow-xlate")) {
            Stream stream = post(gateway() + "/v1/responses", RESPONSE.formatted(model));
            List<String> names = names(stream.events);
            assertThat(names).as(model + ": " + stream.body)
                    .startsWith("response.created", "response.in_progress", ":", ":", ":")
                    .doesNotContain("error", "response.failed");
            // llama-server's own says completed where the translation says incomplete (max_output_tokens reached)
            assertThat(names.getLast()).isIn("response.completed", "response.incomplete");
            assertThat(names.stream().filter("response.created"::equals)).hasSize(1);
            assertThat(names.stream().filter("response.in_progress"::equals)).hasSize(1);
            assertThat(stream.answerAfterHeadersMillis).isGreaterThan(HOLD_MS / 2);
            assertThat(outputText(stream.events)).isEqualTo(direct);
            assertThat(stream.events.getFirst().at("/data/response/id").asString()).startsWith("resp_")
                    .isEqualTo(stream.events.getLast().at("/data/response/id").asString());
        }
    }

    @Test
    void aResponsesStreamOpenedBeforeTheServerDiedGoesOnOnTheNextBackendAsOneResponse() throws Exception {
        String direct = outputText(post(server.url() + "/v1/responses", RESPONSE.formatted("any")).events);
        dying.holdMillis.set(HOLD_MS);
        dying.dropAfterHold.set(true);
        int dropsBefore = dying.drops.get();
        Stream stream = post(gateway() + "/v1/responses", RESPONSE.formatted("tiny-failover"));
        List<String> names = names(stream.events);
        assertThat(dying.drops.get()).isGreaterThan(dropsBefore);
        assertThat(names).as(stream.body).startsWith("response.created", "response.in_progress", ":", ":", ":")
                .doesNotContain("error", "response.failed");
        assertThat(names.getLast()).isIn("response.completed", "response.incomplete");
        assertThat(names.stream().filter("response.created"::equals)).hasSize(1);
        List<Integer> numbers = stream.events.stream().filter(e -> e.has("data"))
                .map(e -> e.at("/data/sequence_number").asInt()).toList();
        assertThat(numbers).as("numbered in order, from 0").isEqualTo(
                java.util.stream.IntStream.range(0, numbers.size()).boxed().toList());
        assertThat(outputText(stream.events)).isEqualTo(direct);
    }

    /**
     * The vendors' SDKs read such streams as they read their vendors': {@code @anthropic-ai/sdk}'s message (passed
     * through from llama-server) has the text and the prompt's usage (told in {@code message_delta}); the
     * {@code openai} SDK's event stream (translated) has the response's text and its end.
     */
    @Test
    void theSdksReadAStreamBegunWhileTheServerReadThePrompt() throws Exception {
        String messageText = text(post(server.url() + "/v1/messages", MESSAGE.formatted("any")).events);
        String responseText = outputText(post(server.url() + "/v1/responses", RESPONSE.formatted("any")).events);
        slow.holdMillis.set(HOLD_MS);
        String script = """
                const path = require('node:path');
                const Anthropic = require(path.join(process.env.LAZARUS_NODE_CLIENTS, 'node_modules/@anthropic-ai/sdk')).default;
                const OpenAI = require(path.join(process.env.LAZARUS_NODE_CLIENTS, 'node_modules/openai')).default;
                (async () => {
                  const anthropic = new Anthropic({ baseURL: process.argv[1], apiKey: 'none', maxRetries: 0 });
                  const message = await anthropic.messages.stream({ model: 'tiny-slow-native', max_tokens: 8,
                    temperature: 0, messages: [{ role: 'user', content: 'Name a river.' }] }).finalMessage();
                  const openai = new OpenAI({ baseURL: process.argv[1] + '/v1', apiKey: 'none', maxRetries: 0 });
                  const events = await openai.responses.create({ model: 'tiny-slow-xlate', max_output_tokens: 8,
                    temperature: 0, store: false, input: 'Name a river.', stream: true });
                  let output = '', last = null;
                  for await (const event of events) {
                    if (event.type === 'response.output_text.delta') output += event.delta;
                    last = event.type;
                  }
                  console.log('RESULT ' + JSON.stringify({ text: message.content[0].text, usage: message.usage,
                    output, last }));
                })().catch((e) => { console.log(e.stack); process.exit(1); });
                """;
        String log = RealClients.runToSuccess(List.of("node", "-e", script, gateway()),
                java.util.Map.of("LAZARUS_NODE_CLIENTS", RealClients.nodeClients().toString()), RealClients.repoRoot(),
                Duration.ofMinutes(2));
        JsonNode result = JSON.readTree(log.substring(log.indexOf("RESULT ") + "RESULT ".length()).lines().findFirst()
                .orElseThrow());
        assertThat(result.get("text").asString()).as(log).isEqualTo(messageText);
        assertThat(result.at("/usage/input_tokens").asInt() + result.at("/usage/cache_read_input_tokens").asInt())
                .as(log).isPositive();
        assertThat(result.at("/usage/output_tokens").asInt()).isPositive();
        assertThat(result.get("output").asString()).isEqualTo(responseText);
        assertThat(result.get("last").asString()).isIn("response.completed", "response.incomplete");
    }

    private String gateway() {
        return "http://127.0.0.1:" + port;
    }

    /** A stream's events ({@code {"event", "data"}}; an SSE comment as {@code {"event": ":"}}) and timing. */
    private record Stream(String body, List<JsonNode> events, long answerAfterHeadersMillis) {}

    private Stream post(String url, String body) throws Exception {
        HttpResponse<InputStream> response = http.send(HttpRequest.newBuilder(URI.create(url))
                .header("content-type", "application/json").header("anthropic-version", "2023-06-01")
                .timeout(Duration.ofMinutes(2)).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofInputStream());
        long headers = System.nanoTime();
        String text;
        try (InputStream in = response.body()) {
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        long answered = Duration.ofNanos(System.nanoTime() - headers).toMillis();
        assertThat(response.statusCode()).as(text).isEqualTo(200);
        assertThat(text).endsWith("\n\n");
        List<JsonNode> events = new ArrayList<>();
        for (String block : text.split("\n\n")) {
            if (block.startsWith(":")) {
                assertThat(block).isEqualTo(": keep-alive");
                events.add(JSON.createObjectNode().put("event", ":"));
                continue;
            }
            String[] lines = block.split("\n");
            assertThat(lines).as(block).hasSize(2);
            assertThat(lines[0]).startsWith("event: ");
            assertThat(lines[1]).startsWith("data: ");
            var event = JSON.createObjectNode().put("event", lines[0].substring("event: ".length()));
            event.set("data", JSON.readTree(lines[1].substring("data: ".length())));
            events.add(event);
        }
        return new Stream(text, events, answered);
    }

    private static List<String> names(List<JsonNode> events) {
        return events.stream().map(e -> e.get("event").asString()).toList();
    }

    private static String text(List<JsonNode> events) {
        StringBuilder text = new StringBuilder();
        events.stream().filter(e -> e.at("/data/delta/type").asString("").equals("text_delta"))
                .forEach(e -> text.append(e.at("/data/delta/text").asString()));
        assertThat(text).isNotEmpty();
        return text.toString();
    }

    private static String outputText(List<JsonNode> events) {
        StringBuilder text = new StringBuilder();
        events.stream().filter(e -> e.get("event").asString().equals("response.output_text.delta"))
                .forEach(e -> text.append(e.at("/data/delta").asString()));
        assertThat(text).isNotEmpty();
        return text.toString();
    }
}
