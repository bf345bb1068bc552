package dev.lazarus.gateway.api;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import com.github.tomakehurst.wiremock.WireMockServer;
import dev.lazarus.gateway.testing.CapturedLogs;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Issue 17's fuzz and abuse suite, bounded and deterministic (fixed seeds, about 2,000 requests):
 * generated bodies against {@code /v1/chat/completions} and {@code /v1/completions} (every field given
 * every wrong type, huge, negative and non-finite numbers, nesting around the depth limit, many keys,
 * invalid UTF-8, truncated JSON, duplicated keys, wrong content types, empty bodies, random byte
 * mutations), and auth and path tricks (the key in other headers, a cookie, the query, {@code Basic},
 * case, {@code //}, {@code ..}, encoded slashes, actuator and admin paths). One upstream echoes its own
 * key, the caller's Authorization and the admin token in every error. Every request goes out on its
 * own raw socket, exactly as written; for every response: no 5xx, an OpenAI error body on every 4xx,
 * no stack trace, no secret (whole or any 8-character piece) in the body, nor in any log line; the
 * gateway is healthy afterwards.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "lazarus.admin.token=" + FuzzAbuseTest.ADMIN_TOKEN,
        "lazarus.security.api-keys[0]=" + FuzzAbuseTest.API_KEY,
        "lazarus.health.interval=1h"})
@ActiveProfiles("test")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class FuzzAbuseTest {

    static final String API_KEY = "fz-api-key-Q8w3Lm2R";
    static final String ADMIN_TOKEN = "fz-admin-T5k9Xc1V";
    static final String UPSTREAM_KEY = "sk-fzUPSTREAM-4Jd7Np0Z";
    private static final List<String> SECRETS = List.of(API_KEY, ADMIN_TOKEN, UPSTREAM_KEY);
    private static final List<String> LOUD = List.of("dev.lazarus");
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final long SEED = 17L;

    private static WireMockServer echo;
    private static final CapturedLogs captured = new CapturedLogs();

    @LocalServerPort
    int port;

    /** Every finding, with the request that caused it; each test fails at its end with all of them. */
    private final List<String> findings = new ArrayList<>();
    private int sent;
    private final Map<Integer, Integer> statuses = new TreeMap<>();

    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) {
        capture();
        echo = new WireMockServer(options().bindAddress("127.0.0.1").dynamicPort().globalTemplating(true));
        echo.start();
        String echoed = "{{request.headers.Authorization}} key=" + UPSTREAM_KEY + " admin " + ADMIN_TOKEN
                + " api_key=" + API_KEY;
        echo.stubFor(get(urlEqualTo("/health")).willReturn(okJson("{\"status\":\"ok\"}")));
        echo.stubFor(get(urlEqualTo("/props")).willReturn(okJson("{\"default_generation_settings\":{\"n_ctx\":4096},"
                + "\"build_info\":\"b1 Authorization: {{request.headers.Authorization}}\"}")));
        echo.stubFor(get(urlEqualTo("/v1/models")).willReturn(okJson(
                "{\"object\":\"list\",\"data\":[{\"id\":\"echo\",\"object\":\"model\"}]}")));
        echo.stubFor(post(urlEqualTo("/v1/chat/completions")).willReturn(aResponse().withStatus(400)
                .withHeader("Content-Type", "application/json")
                .withBody("{\"error\":{\"code\":400,\"message\":\"bad request from " + echoed
                        + "\",\"type\":\"invalid_request_error\"}}")));
        // text/plain, the key just past the quote limit (cut-then-redact would leave a piece)
        echo.stubFor(post(urlEqualTo("/v1/completions")).willReturn(aResponse().withStatus(422)
                .withHeader("Content-Type", "text/plain")
                .withBody("y".repeat(279) + UPSTREAM_KEY + " " + echoed)));

        registry.add("lazarus.backends[0].id", () -> "echo");
        registry.add("lazarus.backends[0].kind", () -> "llamacpp");
        registry.add("lazarus.backends[0].settings.url", echo::baseUrl);
        registry.add("lazarus.backends[0].settings.api-key", () -> UPSTREAM_KEY);
        registry.add("lazarus.backends[0].settings.model-name", () -> "echo");
        registry.add("lazarus.backends[1].id", () -> "alpha");
        registry.add("lazarus.backends[1].kind", () -> "scripted");
        registry.add("lazarus.models[0].name", () -> "m");
        registry.add("lazarus.models[0].backends[0]", () -> "echo");
        registry.add("lazarus.models[1].name", () -> "s");
        registry.add("lazarus.models[1].backends[0]", () -> "alpha");
    }

    @AfterAll
    static void stopUpstream() {
        captured.stop();
        echo.stop();
    }

    private static void capture() {
        captured.start(LOUD);
    }

    // ---- bodies ----

    private static final String[] CHAT_FIELDS = {"model", "messages", "max_tokens", "max_completion_tokens",
        "temperature", "top_p", "n", "stream", "stream_options", "stop", "seed", "presence_penalty",
        "frequency_penalty", "logit_bias", "logprobs", "top_logprobs", "user", "tools", "tool_choice",
        "response_format", "parallel_tool_calls"};
    private static final String[] COMPLETION_FIELDS = {"model", "prompt", "max_tokens", "temperature", "top_p",
        "n", "stream", "stop", "seed", "echo", "logprobs", "suffix", "best_of", "logit_bias", "user"};
    private static final String[] MESSAGE_FIELDS = {"role", "content", "name", "tool_calls", "tool_call_id"};

    /** Every wrong type and every out-of-range number (some not even JSON: NaN, Infinity, a bare word). */
    private static final String[] VALUES = {"null", "true", "false", "0", "-1", "-0.0", "1.5", "2147483648",
        "9223372036854775808", "-9223372036854775809", "99999999999999999999999999999999", "1e308", "-1e308",
        "1e999", "4.9e-324", "NaN", "Infinity", "-Infinity", "\"NaN\"", "\"\"", "\"x\"", "\"\\u0000\"",
        "\"\\ud800\"", "\"" + "x".repeat(20_000) + "\"", "[]", "[null]", "[[[[[]]]]]", "{}", "{\"a\":1}",
        "[{}]", "[\"user\"]", "[{\"role\":\"user\"}]", "[{\"role\":1,\"content\":[]}]", "undefined", "'x'",
        "0x10", "01", "+1", ".5"};

    private static String chat(String fields) {
        return "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":4" + fields + "}";
    }

    private static String chatOn(String model, String fields) {
        return "{\"model\":\"" + model + "\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":4"
                + fields + "}";
    }

    private static String completion(String fields) {
        return "{\"model\":\"m\",\"prompt\":\"hi\",\"max_tokens\":4" + fields + "}";
    }

    /** The base body with one top-level field set to {@code value} (replacing it where the base has it). */
    private static String with(String base, String field, String value) {
        Map<String, String> fields = new LinkedHashMap<>();
        JsonNode node = JSON.readTree(base);
        for (String name : node.propertyNames()) {
            fields.put(name, node.get(name).toString());
        }
        fields.put(field, value);
        StringBuilder out = new StringBuilder("{");
        fields.forEach((name, text) -> out.append(out.length() > 1 ? "," : "").append('"').append(name)
                .append("\":").append(text));
        return out.append('}').toString();
    }

    @Test
    @Order(1)
    void everyFieldOfEitherEndpointWithEveryWrongValue() throws Exception {
        for (String model : List.of("m", "s")) {
            for (String field : CHAT_FIELDS) {
                for (String value : VALUES) {
                    body("/v1/chat/completions", with(chatOn(model, ""), field, value));
                }
            }
            for (String field : MESSAGE_FIELDS) {
                for (String value : VALUES) {
                    body("/v1/chat/completions", chatOn(model, "").replace("\"role\":\"user\",",
                            "\"role\":\"user\",\"" + field + "\":" + value + ","));
                }
            }
        }
        for (String field : COMPLETION_FIELDS) {
            for (String value : VALUES) {
                body("/v1/completions", with(completion(""), field, value));
                body("/v1/completions", with(completion("").replace("\"m\"", "\"s\""), field, value));
            }
        }
        report();
    }

    @Test
    @Order(2)
    void nestingKeysEncodingsTruncationDuplicatesAndEmptyBodies() throws Exception {
        for (String path : List.of("/v1/chat/completions", "/v1/completions")) {
            String base = path.contains("chat") ? chat("") : completion("");
            // nesting around the default limit (64) and far past it, arrays and objects, in a field and as the body
            for (int depth : new int[] {62, 63, 64, 65, 66, 200, 5_000, 30_000}) {
                String arrays = "[".repeat(depth) + "]".repeat(depth);
                String objects = "{\"a\":".repeat(depth) + "1" + "}".repeat(depth);
                body(path, with(base, "x_extra", arrays));
                body(path, with(base, "x_extra", objects));
                body(path, arrays);
                body(path, "[".repeat(depth)); // never closed
            }
            // many keys: under and over the token limit (10000), and over the body limit (64KB)
            for (int count : new int[] {100, 4_000, 6_000, 20_000}) {
                StringBuilder keys = new StringBuilder("{");
                for (int i = 0; i < count; i++) {
                    keys.append(i == 0 ? "" : ",").append('"').append(Integer.toString(i, 36)).append("\":0");
                }
                body(path, with(base, "x_extra", keys.append('}').toString()));
            }
            // a body past the size limit, and a value just under it
            body(path, with(base, "user", "\"" + "u".repeat(70_000) + "\""));
            body(path, with(base, "user", "\"" + "u".repeat(60_000) + "\""));
            // invalid UTF-8: a lone continuation byte, 0xFF, an overlong NUL, a CESU surrogate, a cut sequence
            for (byte[] bad : new byte[][] {{(byte) 0x80}, {(byte) 0xFF, (byte) 0xFE}, {(byte) 0xC0, (byte) 0x80},
                {(byte) 0xED, (byte) 0xA0, (byte) 0x80}, {(byte) 0xE2, (byte) 0x82}, {(byte) 0xF8, (byte) 0x88, (byte) 0x80}}) {
                String marker = "\"INVALID\"";
                String json = with(base, "user", marker);
                int at = json.indexOf(marker) + 1;
                byte[] head = json.substring(0, at).getBytes(StandardCharsets.UTF_8);
                byte[] tail = json.substring(at + marker.length() - 2).getBytes(StandardCharsets.UTF_8);
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                out.write(head);
                out.write(bad);
                out.write(tail);
                send(path, "application/json", bearer(API_KEY), out.toByteArray(), true);
                // as a key, and outside any string
                byte[] raw = out.toByteArray();
                send(path, "application/json", bearer(API_KEY),
                        concat("{".getBytes(StandardCharsets.UTF_8), bad, "\":1}".getBytes(StandardCharsets.UTF_8)), true);
                send(path, "application/json", bearer(API_KEY), concat(bad, raw), true);
            }
            // truncated: every prefix of the base body, streaming and not
            String streamed = with(base, "stream", "true");
            for (int cut = 0; cut < base.length(); cut++) {
                body(path, base.substring(0, cut));
            }
            for (int cut = 0; cut < streamed.length(); cut += 3) {
                body(path, streamed.substring(0, cut));
            }
            // duplicated keys
            for (String field : new String[] {"model", "messages", "prompt", "stream", "max_tokens"}) {
                body(path, base.replaceFirst("\\{", "{\"" + field + "\":1,"));
                body(path, base.replaceFirst("\\{", "{\"" + field + "\":\"s\","));
                body(path, base.replace("}", ",\"" + field + "\":null}"));
            }
            // not an object, empty and near empty
            for (String text : new String[] {"", " ", "\n", "null", "[]", "\"str\"", "0", "true", "{", "}", "{}",
                "{\"model\":\"m\"}", "{\"model\":null}", "\uFEFF" + base, base + "garbage", base + base, "//" + base}) {
                body(path, text);
            }
            send(path, null, bearer(API_KEY), null, true); // no Content-Length, no body
            // wrong content types
            for (String type : new String[] {null, "", "text/plain", "application/x-www-form-urlencoded",
                "multipart/form-data", "multipart/form-data; boundary=x", "application/xml", "application/json; charset=utf-16",
                "application/json; charset=bogus", "application/json;;;", "*/*", "application/*", "///",
                "application/json\u0001", "text/event-stream", "application/x-ndjson"}) {
                send(path, type, bearer(API_KEY), base.getBytes(StandardCharsets.UTF_8), true);
            }
            send(path, "application/x-www-form-urlencoded", bearer(API_KEY),
                    "model=m&prompt=hi".getBytes(StandardCharsets.UTF_8), true);
            send(path, "application/json; charset=utf-16", bearer(API_KEY), base.getBytes(StandardCharsets.UTF_16), true);
        }
        report();
    }

    @Test
    @Order(3)
    void randomByteMutationsOfValidBodies() throws Exception {
        Random random = new Random(SEED);
        String[] bases = {chat(""), chatOn("s", ""), completion(""), with(chat(""), "stream", "true"),
            chatOn("s", ",\"stop\":[\"a\"],\"temperature\":0.5,\"logit_bias\":{\"1\":2}")};
        byte[] alphabet = "{}[]\":,0123456789-+.eE\\ntrufalsx \u0000\t".getBytes(StandardCharsets.ISO_8859_1);
        for (int i = 0; i < 400; i++) {
            String base = bases[i % bases.length];
            String path = base.contains("prompt") ? "/v1/completions" : "/v1/chat/completions";
            byte[] bytes = base.getBytes(StandardCharsets.UTF_8);
            int edits = 1 + random.nextInt(4);
            for (int e = 0; e < edits; e++) {
                bytes = mutate(bytes, random, alphabet);
            }
            send(path, "application/json", bearer(API_KEY), bytes, true);
        }
        report();
    }

    private static byte[] mutate(byte[] bytes, Random random, byte[] alphabet) {
        int at = bytes.length == 0 ? 0 : random.nextInt(bytes.length);
        byte b = random.nextBoolean() ? alphabet[random.nextInt(alphabet.length)] : (byte) random.nextInt(256);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        switch (random.nextInt(3)) {
            case 0 -> { // replace
                out.write(bytes, 0, bytes.length);
                byte[] copy = out.toByteArray();
                if (copy.length > 0) {
                    copy[at] = b;
                }
                return copy;
            }
            case 1 -> { // insert
                out.write(bytes, 0, at);
                out.write(b);
                out.write(bytes, at, bytes.length - at);
            }
            default -> { // delete
                out.write(bytes, 0, at);
                if (at + 1 <= bytes.length) {
                    out.write(bytes, Math.min(at + 1, bytes.length), bytes.length - Math.min(at + 1, bytes.length));
                }
            }
        }
        return out.toByteArray();
    }

    // ---- auth and paths ----

    @Test
    @Order(4)
    void keysAnywhereButTheBearerAndXApiKeyHeadersAreRefused() throws Exception {
        String basic = Base64.getEncoder().encodeToString((API_KEY).getBytes(StandardCharsets.UTF_8));
        String basicUser = Base64.getEncoder().encodeToString(("user:" + API_KEY).getBytes(StandardCharsets.UTF_8));
        String basicPass = Base64.getEncoder().encodeToString((":" + API_KEY).getBytes(StandardCharsets.UTF_8));
        String[] refused = {
            // x-api-key is Anthropic's header for the key (its SDKs and Claude Code send it): only the key itself passes
            "X-Api-Key: " + API_KEY.toUpperCase(), "X-Api-Key: " + API_KEY.substring(0, 8), "X-Api-Key: " + API_KEY + "x",
            "X-Api-Key: Bearer " + API_KEY, "Api-Key: " + API_KEY, "OpenAI-Api-Key: " + API_KEY,
            "Proxy-Authorization: Bearer " + API_KEY, "Cookie: api_key=" + API_KEY, "Cookie: Authorization=Bearer%20" + API_KEY,
            "Authorization: Basic " + basic, "Authorization: Basic " + basicUser, "Authorization: Basic " + basicPass,
            "Authorization: " + API_KEY, "Authorization: Bearer", "Authorization: Bearer ", "Authorization: Bearer  " + API_KEY + "x",
            "Authorization: Bearer " + API_KEY.toUpperCase(), "Authorization: Bearer " + API_KEY.substring(0, 8),
            "Authorization: Bearer " + ADMIN_TOKEN,
            "Authorization: Token " + API_KEY, "Authorization: Digest " + API_KEY, "X-Forwarded-Authorization: Bearer " + API_KEY,
            "Authorization: Bearer " + API_KEY + ", Bearer x", "Authorization: Bearer \"" + API_KEY + "\"",
            "X-Original-URL: /actuator/health", "X-Rewrite-URL: /actuator/health", "X-Forwarded-For: 127.0.0.1",
        };
        for (String header : refused) {
            for (String path : List.of("/v1/chat/completions", "/v1/completions")) {
                exchange("POST", path, "application/json", header,
                        (path.contains("chat") ? chatOn("s", "") : completion("").replace("\"m\"", "\"s\"")).getBytes(StandardCharsets.UTF_8),
                        true, 401);
            }
            exchange("GET", "/v1/models", null, header, null, true, 401);
        }
        // a NUL after the key is not HTTP: Netty's 400, in an OpenAI body
        exchange("GET", "/v1/models", null, "Authorization: Bearer " + API_KEY + "\u0000", null, true, 400);
        for (String query : new String[] {"?api_key=", "?key=", "?access_token=", "?Authorization=Bearer%20"}) {
            exchange("GET", "/v1/models" + query + API_KEY, null, null, null, true, 401);
            exchange("POST", "/v1/chat/completions" + query + API_KEY, "application/json", null,
                    chatOn("s", "").getBytes(StandardCharsets.UTF_8), true, 401);
        }
        // the admin token and the API key are not interchangeable
        for (String path : List.of("/admin/backends", "/admin/events", "/actuator/health/details", "/admin/openapi")) {
            exchange("GET", path, null, "Authorization: Bearer " + API_KEY, null, true, 401);
            exchange("GET", path, null, null, null, true, 401);
            exchange("GET", path, null, "Authorization: Basic " + basic, null, true, 401);
        }
        report();
    }

    @Test
    @Order(5)
    void pathTricksNeitherBypassNorBreak() throws Exception {
        String[] paths = {"//v1/chat/completions", "/v1//chat/completions", "/v1/chat/completions/", "/v1/./chat/completions",
            "/v1/x/../chat/completions", "/x/../v1/chat/completions", "/v1/chat%2Fcompletions", "/v1%2Fchat%2Fcompletions",
            "/v1/chat%2fcompletions", "/%2e%2e/v1/chat/completions", "/v1/%2e/chat/completions", "/v1/chat/completions%00",
            "/v1/chat/completions;x=1", "/v1;/chat/completions", "/V1/CHAT/COMPLETIONS", "/v1/Chat/Completions",
            "/v1/chat/completions%20", "/v1/chat\\completions", "/v1/chat%5Ccompletions", "/v1/completions/..",
            "/v1/completions/../models", "/v1/models/..%2F..%2Fadmin%2Fbackends", "/v1/models/%2e%2e/%2e%2e/admin/backends",
            "/admin/./backends", "/admin//backends", "/ADMIN/backends", "/admin%2Fbackends", "/v1/../admin/backends",
            "/actuator/env", "/actuator/configprops", "/actuator/heapdump", "/actuator/threaddump", "/actuator/loggers",
            "/actuator/mappings", "/actuator/beans", "/actuator/shutdown", "/actuator/metrics", "/actuator/metrics/nope",
            "/actuator/health/x/..", "/actuator/health/%2e%2e/env", "/actuator/health/..%2Fenv", "/actuator/health/backends",
            "/actuator/health//", "/actuator/health/echo", "/actuator/../admin/backends", "/actuator/%2e%2e/admin/backends",
            "/actuator//env", "/actuator/health;/../env", "/actuator/health%5C..%5Cenv", "/actuator/prometheus/x",
            "/", "/v1", "/v1/", "/v2/chat/completions", "/favicon.ico", "/index.html", "/error", "/.env", "/../../etc/passwd",
            "/%2e%2e/%2e%2e/etc/passwd", "/v1/models/" + "a".repeat(4_000), "/v1/models/m", "/v1/models/%00",
            "/v1/models?x=%ZZ", "/v1/models#frag", "*", "http://127.0.0.1/v1/models", "/v1/models/\u00e9"};
        for (String path : paths) {
            for (String method : List.of("GET", "POST", "DELETE", "OPTIONS", "PUT", "HEAD", "TRACE")) {
                byte[] body = method.equals("POST") || method.equals("PUT") ? chatOn("s", "").getBytes(StandardCharsets.UTF_8) : null;
                // anonymous: nothing under /v1 or /admin answers 2xx
                int status = exchange(method, path, body == null ? null : "application/json", null, body, true, 0);
                String normal = path.toLowerCase().replace("%2f", "/").replace("%2e", ".");
                if (status >= 200 && status < 300 && (normal.contains("v1") || normal.contains("admin"))
                        && !normal.startsWith("/actuator")) {
                    findings.add("anonymous " + method + " " + path + " answered " + status);
                }
                // with the API key and with the admin token: still no 5xx, no leak
                exchange(method, path, body == null ? null : "application/json", "Authorization: Bearer " + API_KEY, body, true, 0);
                exchange(method, path, body == null ? null : "application/json", "Authorization: Bearer " + ADMIN_TOKEN, body, true, 0);
            }
        }
        report();
    }

    // ---- afterwards ----

    @Test
    @Order(6)
    void healthyAfterwardsAndNoSecretInAnyLogLine() throws Exception {
        String health = exchangeText("GET", "/actuator/health", null, null, null);
        assertThat(health).startsWith("HTTP/1.1 200").contains("\"UP\"");
        String served = exchangeText("POST", "/v1/chat/completions", "application/json", bearer(API_KEY),
                chatOn("s", "").getBytes(StandardCharsets.UTF_8));
        assertThat(served).startsWith("HTTP/1.1 200").contains("chat.completion");
        String echoed = exchangeText("POST", "/v1/chat/completions", "application/json", bearer(API_KEY),
                chat("").getBytes(StandardCharsets.UTF_8));
        assertThat(echoed).as("the echoing upstream was reached").startsWith("HTTP/1.1 400").contains("***");
        // the admin views of the echoing upstream
        check("GET /admin/backends", exchangeText("GET", "/admin/backends", null, bearer(ADMIN_TOKEN), null), 0);
        check("GET /actuator/health/details", exchangeText("GET", "/actuator/health/details", null, bearer(ADMIN_TOKEN), null), 0);
        check("GET /v1/models", exchangeText("GET", "/v1/models", null, bearer(API_KEY), null), 0);

        List<ILoggingEvent> events = captured.events();
        assertThat(events).as("the log was captured").isNotEmpty();
        for (ILoggingEvent event : events) {
            String line = event.getLoggerName() + " " + event.getFormattedMessage()
                    + (event.getThrowableProxy() == null ? "" : "\n" + ThrowableProxyUtil.asString(event.getThrowableProxy()));
            String secret = secretIn(line);
            if (secret != null) {
                findings.add("a log line holds " + secret + ": " + abbreviate(line));
            }
            if (event.getLevel().isGreaterOrEqual(Level.ERROR)) {
                findings.add("an ERROR line: " + abbreviate(line));
            }
        }
        report();
    }

    // ---- one exchange, and what every response must be ----

    private static String bearer(String key) {
        return "Authorization: Bearer " + key;
    }

    private void body(String path, String json) throws Exception {
        send(path, "application/json", bearer(API_KEY), json.getBytes(StandardCharsets.UTF_8), true);
    }

    private void send(String path, String contentType, String header, byte[] body, boolean withLength) throws Exception {
        exchange("POST", path, contentType, header, body, withLength, 0);
    }

    private int exchange(String method, String path, String contentType, String header, byte[] body, boolean withLength,
            int expected) throws Exception {
        String request = method + " " + path;
        String response = exchangeText(method, path, contentType, header, body);
        int status = check(request + (header == null ? "" : " [" + abbreviate(header) + "]"), response, expected);
        return status;
    }

    private String exchangeText(String method, String path, String contentType, String header, byte[] body) throws Exception {
        StringBuilder head = new StringBuilder(method).append(' ').append(path).append(" HTTP/1.1\r\nHost: 127.0.0.1\r\n");
        if (contentType != null) {
            head.append("Content-Type: ").append(contentType).append("\r\n");
        }
        if (header != null) {
            head.append(header).append("\r\n");
        }
        if (body != null) {
            head.append("Content-Length: ").append(body.length).append("\r\n");
        }
        head.append("Connection: close\r\n\r\n");
        sent++;
        try (RawHttp socket = new RawHttp(port)) {
            socket.trySend(head + (body == null ? "" : new String(body, StandardCharsets.ISO_8859_1)));
            String response = socket.readUntilClosed(15_000);
            return response == null ? "" : response;
        }
    }

    /** Records every way this response breaks the rules; {@code expected} 0 means any status but 5xx. */
    private int check(String request, String response, int expected) {
        if (response.length() < 12 || !response.startsWith("HTTP/1.1 ")) {
            findings.add(request + ": no HTTP answer: " + abbreviate(response));
            return -1;
        }
        int status = Integer.parseInt(response.substring(9, 12));
        statuses.merge(status, 1, Integer::sum);
        int headEnd = response.indexOf("\r\n\r\n");
        String head = headEnd < 0 ? response : response.substring(0, headEnd);
        String raw = headEnd < 0 ? "" : response.substring(headEnd + 4);
        String body = head.toLowerCase().contains("transfer-encoding: chunked") ? dechunk(raw) : raw;
        String text = new String(body.getBytes(StandardCharsets.ISO_8859_1), StandardCharsets.UTF_8);
        if (status >= 500) {
            findings.add(request + ": " + status + " " + abbreviate(text));
        }
        if (expected != 0 && status != expected) {
            findings.add(request + ": " + status + " where " + expected + " was expected");
        }
        if (status >= 400 && status < 500 && !request.startsWith("HEAD")) {
            String shape = openAiShape(text);
            if (shape != null) {
                findings.add(request + ": " + status + " " + shape + ": " + abbreviate(text));
            }
        }
        if (text.contains("Exception") || text.contains("\tat ") || text.contains("\n\tat") || text.contains(".java:")) {
            findings.add(request + ": a stack trace in the body: " + abbreviate(text));
        }
        String secret = secretIn(response);
        if (secret != null) {
            findings.add(request + ": the response holds " + secret + ": " + abbreviate(response));
        }
        return status;
    }

    /** Null when {@code text} is {@code {"error":{"message","type","param","code"}}}, else what is wrong. */
    private static String openAiShape(String text) {
        JsonNode root;
        try {
            root = JSON.readTree(text);
        } catch (RuntimeException e) {
            return "body not JSON";
        }
        if (root == null || !root.isObject() || !root.has("error") || root.size() != 1) {
            return "not {\"error\":...}";
        }
        JsonNode error = root.get("error");
        if (!error.isObject() || !error.has("message") || !error.has("type") || !error.has("param") || !error.has("code")) {
            return "error without message, type, param and code";
        }
        if (!error.get("message").isString() || error.get("message").asString().isBlank() || !error.get("type").isString()) {
            return "error message or type not a non-blank string";
        }
        return null;
    }

    private static String secretIn(String text) {
        for (String secret : SECRETS) {
            for (int i = 0; i + 8 <= secret.length(); i++) {
                if (text.contains(secret.substring(i, i + 8))) {
                    return "'" + secret.substring(i, i + 8) + "' of " + secret;
                }
            }
        }
        return null;
    }

    private static String dechunk(String raw) {
        StringBuilder out = new StringBuilder();
        int at = 0;
        while (at < raw.length()) {
            int end = raw.indexOf("\r\n", at);
            if (end < 0) {
                break;
            }
            int size;
            try {
                size = Integer.parseInt(raw.substring(at, end).split(";")[0].trim(), 16);
            } catch (NumberFormatException e) {
                return raw;
            }
            if (size == 0) {
                break;
            }
            out.append(raw, end + 2, Math.min(raw.length(), end + 2 + size));
            at = end + 2 + size + 2;
        }
        return out.toString();
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] part : parts) {
            out.writeBytes(part);
        }
        return out.toByteArray();
    }

    private static String abbreviate(String text) {
        String flat = text.replace("\r", "\\r").replace("\n", "\\n");
        return flat.length() > 300 ? flat.substring(0, 300) + "…(" + flat.length() + ")" : flat;
    }

    private void report() {
        System.out.printf("FuzzAbuseTest: %d requests, statuses %s%n", sent, statuses);
        assertThat(sent).isPositive();
        assertThat(findings).as("%d findings in %d requests", findings.size(), sent).isEmpty();
    }
}
