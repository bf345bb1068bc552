package dev.lazarus.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.gateway.testing.GatewayTestSupport;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;

/** Every error the gateway produces itself: OpenAI shape, right status, never a 500. */
class RequestErrorsTest extends GatewayTestSupport {

    private static JsonNode errorOf(WebTestClient.ResponseSpec response, int status) {
        String body = response.expectStatus().isEqualTo(status)
                .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_JSON)
                .expectBody(String.class).returnResult().getResponseBody();
        JsonNode root = json(body);
        assertThat(root.properties()).hasSize(1);
        JsonNode error = root.get("error");
        assertThat(error.propertyNames()).containsExactlyInAnyOrder("message", "type", "param", "code");
        assertThat(error.get("message").asString()).isNotBlank();
        assertThat(body).doesNotContain("Exception", "\tat ", "trace");
        return error;
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "malformed JSON | {\"model\": \"test-model\", | ",
            "not an object | [1, 2] | ",
            "JSON null | null | ",
            "missing model | {\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]} | model",
            "missing messages | {\"model\": \"test-model\"} | messages",
            "empty messages | {\"model\": \"test-model\", \"messages\": []} | messages",
            "messages not an array | {\"model\": \"test-model\", \"messages\": \"hi\"} | messages",
            "bad role | {\"model\": \"test-model\", \"messages\": [{\"role\": \"robot\", \"content\": \"x\"}]} | messages[0].role",
            "missing content | {\"model\": \"test-model\", \"messages\": [{\"role\": \"user\"}]} | messages[0].content",
            "content of wrong type | {\"model\": \"test-model\", \"messages\": [{\"role\": \"user\", \"content\": 5}]} | messages[0].content",
            "temperature as string | {\"model\": \"test-model\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"temperature\": \"hot\"} | temperature",
            "temperature too high | {\"model\": \"test-model\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"temperature\": 2.5} | temperature",
            "top_p negative | {\"model\": \"test-model\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"top_p\": -0.1} | top_p",
            "n above one | {\"model\": \"test-model\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"n\": 2} | n",
            "max_tokens zero | {\"model\": \"test-model\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"max_tokens\": 0} | max_tokens",
            "stream not boolean | {\"model\": \"test-model\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"stream\": [1]} | stream",
            "stream_options without stream | {\"model\": \"test-model\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"stream_options\": {\"include_usage\": true}} | stream_options",
            // Malformed inputs that once reached a backend (an internal error there counts against its breaker)
            // or were reported without the field at fault.
            "null message | {\"model\": \"test-model\", \"messages\": [null]} | messages[0]",
            "null content part | {\"model\": \"test-model\", \"messages\": [{\"role\": \"user\", \"content\": [null]}]} | messages[0].content",
            "text part without text | {\"model\": \"test-model\", \"messages\": [{\"role\": \"user\", \"content\": [{\"type\": \"text\"}]}]} | messages[0].content",
            "null tool | {\"model\": \"test-model\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"tools\": [null]} | tools[0]",
            "tool without function | {\"model\": \"test-model\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"tools\": [{\"type\": \"function\"}]} | tools[0].function",
            "tool without name | {\"model\": \"test-model\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"tools\": [{\"type\": \"function\", \"function\": {}}]} | tools[0].function.name",
            "null tool call | {\"model\": \"test-model\", \"messages\": [{\"role\": \"assistant\", \"tool_calls\": [null]}]} | messages[0].tool_calls[0]",
            "tool call without function | {\"model\": \"test-model\", \"messages\": [{\"role\": \"assistant\", \"tool_calls\": [{\"id\": \"c1\"}]}]} | messages[0].tool_calls[0].function",
            "tool message without id | {\"model\": \"test-model\", \"messages\": [{\"role\": \"tool\", \"content\": \"x\"}]} | messages[0].tool_call_id",
            "null stop | {\"model\": \"test-model\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"stop\": [\"a\", null]} | stop[1]",
            "stop an object | {\"model\": \"test-model\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"stop\": {}} | stop",
            "max_tokens negative | {\"model\": \"test-model\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"max_tokens\": -1} | max_tokens",
            "max_tokens past int | {\"model\": \"test-model\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"max_tokens\": 99999999999999} | max_tokens",
            "seed past long | {\"model\": \"test-model\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"seed\": 1e30} | seed",
            "temperature overflowing | {\"model\": \"test-model\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"temperature\": 1e400} | temperature",
            "logit_bias not a map | {\"model\": \"test-model\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"logit_bias\": [1]} | logit_bias",
            "include_usage not boolean | {\"model\": \"test-model\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"stream\": true, \"stream_options\": {\"include_usage\": \"x\"}} | stream_options.include_usage",
            "response_format a string | {\"model\": \"test-model\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"response_format\": \"json\"} | response_format",
            "top_logprobs without logprobs | {\"model\": \"test-model\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"top_logprobs\": 2} | top_logprobs",
            "two bodies | {} {} | ",
            "NaN literal | {\"model\": \"test-model\", \"messages\": [], \"temperature\": NaN} | "})
    void badChatRequestsAre400WithParam(String name, String body, String param) {
        JsonNode error = errorOf(post("/v1/chat/completions", body), 400);
        assertThat(error.get("type").asString()).isEqualTo("invalid_request_error");
        if (param == null) {
            assertThat(error.get("param").isNull()).isTrue();
        } else {
            assertThat(error.get("param").asString()).isEqualTo(param);
        }
    }

    /**
     * Scalars are taken only as what they are (Jackson coerces them by default): OpenAI answers each
     * of these with 400 invalid_type naming the field and what was sent instead.
     */
    @ParameterizedTest(name = "{0}: {1}")
    @CsvSource(delimiter = '|', value = {
            "max_tokens | \"5\" | max_tokens | expected an integer, but got a string instead",
            "max_tokens | 1.5 | max_tokens | expected an integer, but got a decimal number instead",
            "max_tokens | 2.0 | max_tokens | expected an integer, but got a decimal number instead",
            "max_tokens | true | max_tokens | expected an integer, but got a boolean instead",
            "max_tokens | \"\" | max_tokens | expected an integer, but got a string instead",
            "max_completion_tokens | \"5\" | max_completion_tokens | expected an integer, but got a string instead",
            "n | 1.0 | n | expected an integer, but got a decimal number instead",
            "seed | \"42\" | seed | expected an integer, but got a string instead",
            "seed | 4.2 | seed | expected an integer, but got a decimal number instead",
            "top_logprobs | \"2\" | top_logprobs | expected an integer, but got a string instead",
            "temperature | \"0.5\" | temperature | expected a number, but got a string instead",
            "top_p | false | top_p | expected a number, but got a boolean instead",
            "logit_bias | {\"50256\": \"-100\"} | logit_bias.50256 | expected a number, but got a string instead",
            "stream | 1 | stream | expected a boolean, but got an integer instead",
            "stream | \"true\" | stream | expected a boolean, but got a string instead",
            "logprobs | 0 | logprobs | expected a boolean, but got an integer instead",
            "parallel_tool_calls | \"false\" | parallel_tool_calls | expected a boolean, but got a string instead",
            "user | 5 | user | expected a string, but got an integer instead",
            "user | true | user | expected a string, but got a boolean instead",
            "model | 4 | model | expected a string, but got an integer instead",
            "stop | [5] | stop[0] | expected a string, but got an integer instead",
            "stop | [\"a\", 1.5] | stop[1] | expected a string, but got a decimal number instead",
            "stream_options | {\"include_usage\": 1} | stream_options.include_usage | expected a boolean, but got an integer instead"})
    void scalarsOfTheWrongTypeAre400InvalidType(String field, String value, String param, String reason) {
        String body = "{\"model\": \"test-model\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \""
                + field + "\": " + value + (field.equals("stream_options") ? ", \"stream\": true}" : "}");
        if (field.equals("model")) {
            body = "{\"model\": 4, \"messages\": [{\"role\": \"user\", \"content\": \"x\"}]}";
        }
        JsonNode error = errorOf(post("/v1/chat/completions", body), 400);
        assertThat(error.get("type").asString()).isEqualTo("invalid_request_error");
        assertThat(error.get("code").asString()).isEqualTo("invalid_type");
        assertThat(error.get("param").asString()).isEqualTo(param);
        assertThat(error.get("message").asString()).isEqualTo("Invalid type for '" + param + "': " + reason + ".");
    }

    @Test
    void nestedScalarsOfTheWrongTypeNameTheirPath() {
        JsonNode error = errorOf(post("/v1/chat/completions", "{\"model\": \"test-model\", \"messages\": "
                + "[{\"role\": \"user\", \"content\": \"x\"}, {\"role\": \"assistant\", \"name\": 7, \"content\": \"y\"}]}"), 400);
        assertThat(error.get("param").asString()).isEqualTo("messages[1].name");
        error = errorOf(post("/v1/chat/completions", "{\"model\": \"test-model\", \"messages\": [{\"role\": \"user\", "
                + "\"content\": \"x\"}], \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"f\", \"strict\": \"yes\"}}]}"),
                400);
        assertThat(error.get("param").asString()).isEqualTo("tools[0].function.strict");
        assertThat(error.get("code").asString()).isEqualTo("invalid_type");
    }

    @Test
    void legacyCompletionScalarsAreStrictToo() {
        JsonNode error = errorOf(post("/v1/completions", "{\"model\": \"test-model\", \"prompt\": \"x\", \"max_tokens\": \"5\"}"), 400);
        assertThat(error.get("param").asString()).isEqualTo("max_tokens");
        assertThat(error.get("message").asString())
                .isEqualTo("Invalid type for 'max_tokens': expected an integer, but got a string instead.");
        assertThat(errorOf(post("/v1/completions", "{\"model\": \"test-model\", \"prompt\": \"x\", \"echo\": 1}"), 400)
                .get("param").asString()).isEqualTo("echo");
        assertThat(errorOf(post("/v1/completions", "{\"model\": \"test-model\", \"prompt\": \"x\", \"logprobs\": 1.5}"), 400)
                .get("param").asString()).isEqualTo("logprobs");
    }

    @Test
    void badCompletionRequestsAre400WithParam() {
        assertThat(errorOf(post("/v1/completions", "{\"model\": \"test-model\"}"), 400).get("param").asString())
                .isEqualTo("prompt");
        assertThat(errorOf(post("/v1/completions", "{\"model\": \"test-model\", \"prompt\": {\"a\": 1}}"), 400)
                .get("param").asString()).isEqualTo("prompt");
        assertThat(errorOf(post("/v1/completions", "{\"model\": \"test-model\", \"prompt\": \"x\", \"stop\": [null]}"),
                400).get("param").asString()).isEqualTo("stop[0]");
    }

    @Test
    void invalidUtf8Is400() {
        byte[] body = "{\"model\": \"test-model\", \"messages\": [{\"role\": \"user\", \"content\": \"\u00ff\"}]}"
                .getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
        errorOf(client.post().uri("/v1/chat/completions").header("Authorization", "Bearer " + API_KEY)
                .contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange(), 400);
    }

    /** Query parameters are not how OpenAI takes arguments: they neither change nor break the request. */
    @Test
    void queryParametersOnPostAreIgnored() {
        post("/v1/chat/completions?stream=true&model=nope",
                "{\"model\": \"test-model\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}]}")
                .expectStatus().isOk()
                .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_JSON);
    }

    @Test
    void emptyBodyIs400() {
        errorOf(client.post().uri("/v1/chat/completions").header("Authorization", "Bearer " + API_KEY)
                .contentType(MediaType.APPLICATION_JSON).exchange(), 400);
    }

    /** Issue 35: a huge unknown model name is not echoed back whole. */
    @Test
    void anUnknownModelsNameIsEchoedAtMost256Characters() {
        String name = "m".repeat(40_000);
        JsonNode error = errorOf(post("/v1/chat/completions",
                "{\"model\": \"" + name + "\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}]}"), 404);
        assertThat(error.get("code").asString()).isEqualTo("model_not_found");
        // The available models' names follow it.
        assertThat(error.get("message").asString()).contains("'" + "m".repeat(256) + "...'").hasSizeLessThan(600);
    }

    @Test
    void unknownModelIs404ModelNotFound() {
        JsonNode error = errorOf(post("/v1/chat/completions",
                "{\"model\": \"no-such-model\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}]}"), 404);
        assertThat(error.get("code").asString()).isEqualTo("model_not_found");
        assertThat(error.get("param").asString()).isEqualTo("model");
        assertThat(error.get("message").asString()).contains("no-such-model");
    }

    @Test
    void bodyOverTheLimitIs413() {
        String big = "x".repeat(70 * 1024);
        JsonNode error = errorOf(post("/v1/chat/completions",
                "{\"model\": \"test-model\", \"messages\": [{\"role\": \"user\", \"content\": \"" + big + "\"}]}"), 413);
        assertThat(error.get("code").asString()).isEqualTo("request_too_large");
    }

    @Test
    void wrongMethodIs405WithAllow() {
        errorOf(client.get().uri("/v1/chat/completions").header("Authorization", "Bearer " + API_KEY).exchange()
                .expectHeader().valueEquals("Allow", "POST"), 405);
    }

    /**
     * The completion endpoints are functional routes (issue 13): OPTIONS is a JSON 405 naming POST, like every
     * other method but POST (the annotated controllers answered it with an empty 200). No CORS is configured.
     */
    @ParameterizedTest
    @ValueSource(strings = {"/v1/chat/completions", "/v1/completions"})
    void optionsIs405WithAllow(String path) {
        JsonNode error = errorOf(client.options().uri(path).header("Authorization", "Bearer " + API_KEY).exchange()
                .expectHeader().valueEquals("Allow", "POST"), 405);
        assertThat(error.get("type").asString()).isEqualTo("invalid_request_error");
    }

    @Test
    void unknownPathIs404() {
        JsonNode error = errorOf(post("/v1/nothing-here", "{}"), 404);
        assertThat(error.get("code").asString()).isEqualTo("unknown_url");
    }

    /** Netty rejects these before Spring sees them; the client still gets an OpenAI body, then the connection closes. */
    @Test
    void urlOverNettysLimitIs414WithAnOpenAiBody() throws Exception {
        HttpResponse<String> response = rawGet("/v1/models?q=" + "x".repeat(10_000), Map.of());
        assertThat(response.statusCode()).isEqualTo(414);
        assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(
                type -> assertThat(type).startsWith("application/json"));
        JsonNode error = json(response.body()).get("error");
        assertThat(error.propertyNames()).containsExactlyInAnyOrder("message", "type", "param", "code");
        assertThat(error.get("type").asString()).isEqualTo("invalid_request_error");
        assertThat(error.get("code").asString()).isEqualTo("uri_too_long");
    }

    @Test
    void headersOverNettysLimitAre431WithAnOpenAiBody() throws Exception {
        HttpResponse<String> response = rawGet("/v1/models", Map.of("X-Big", "y".repeat(20_000)));
        assertThat(response.statusCode()).isEqualTo(431);
        JsonNode error = json(response.body()).get("error");
        assertThat(error.get("type").asString()).isEqualTo("invalid_request_error");
        assertThat(error.get("code").asString()).isEqualTo("request_header_fields_too_large");
        assertThat(error.get("message").asString()).isNotBlank();
    }

    /** The JDK client, not WebTestClient: the request must reach the socket exactly as sent. */
    private HttpResponse<String> rawGet(String path, Map<String, String> headers) throws Exception {
        try (HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build()) {
            HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                    .timeout(Duration.ofSeconds(20)).header("Authorization", "Bearer " + API_KEY).GET();
            headers.forEach(request::header);
            return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        }
    }

    @Test
    void wrongMediaTypeIs415() {
        errorOf(client.post().uri("/v1/chat/completions").header("Authorization", "Bearer " + API_KEY)
                .contentType(MediaType.TEXT_PLAIN).bodyValue("model=test-model").exchange(), 415);
    }

    @Test
    void completionsOnAChatOnlyModelIs400() {
        JsonNode error = errorOf(post("/v1/completions", "{\"model\": \"chat-only-model\", \"prompt\": \"x\"}"), 400);
        assertThat(error.get("param").asString()).isEqualTo("model");
    }
}
