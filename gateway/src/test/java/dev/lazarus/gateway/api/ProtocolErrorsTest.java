package dev.lazarus.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.gateway.testing.GatewayTestSupport;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.databind.JsonNode;

/**
 * Issue 17, finding 6: requests that are not valid HTTP/1.1, most rejected by Netty's decoder before
 * Spring sees them, get a 4xx with the OpenAI error body, never an empty body or a 5xx. Each case is
 * sent on its own raw socket exactly as written ({@code \r\n} and {@code \0} spelled out).
 */
class ProtocolErrorsTest extends GatewayTestSupport {

    private static final String POST = "POST /v1/chat/completions HTTP/1.1\\r\\nHost: x\\r\\n"
            + "Authorization: Bearer " + API_KEY + "\\r\\nContent-Type: application/json\\r\\n";

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "bad chunk size | " + POST + "Transfer-Encoding: chunked\\r\\n\\r\\nzz\\r\\n{}\\r\\n0\\r\\n\\r\\n",
            "overflowing chunk size | " + POST + "Transfer-Encoding: chunked\\r\\n\\r\\nFFFFFFFFFFFFFFFFFFFFFF\\r\\n{}\\r\\n",
            "negative chunk size | " + POST + "Transfer-Encoding: chunked\\r\\n\\r\\n-2\\r\\n{}\\r\\n0\\r\\n\\r\\n",
            "chunk without its CRLF | " + POST + "Transfer-Encoding: chunked\\r\\n\\r\\n2\\r\\n{}XX0\\r\\n\\r\\n",
            "Content-Length with chunked | " + POST + "Content-Length: 2\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n2\\r\\n{}\\r\\n0\\r\\n\\r\\n",
            "duplicate Content-Length | " + POST + "Content-Length: 2\\r\\nContent-Length: 3\\r\\n\\r\\n{} ",
            "negative Content-Length | " + POST + "Content-Length: -1\\r\\n\\r\\n{}",
            "Content-Length not a number | " + POST + "Content-Length: 2x\\r\\n\\r\\n{}",
            "unknown transfer coding | " + POST + "Transfer-Encoding: gzip\\r\\n\\r\\n{}",
            "not HTTP | GET /v1/models FOO/1.1\\r\\nHost: x\\r\\n\\r\\n",
            "HTTP/1.1x | GET /v1/models HTTP/1.1x\\r\\nHost: x\\r\\n\\r\\n",
            "bare LF | GET /v1/models HTTP/1.1\\nHost: x\\n\\n",
            "NUL in a header | GET /v1/models HTTP/1.1\\r\\nHost: x\\r\\nX-A: a\\0b\\r\\n\\r\\n",
            "NUL in the URL | GET /v1/mo\\0dels HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n",
            "space in a header name | GET /v1/models HTTP/1.1\\r\\nHost: x\\r\\nBad Name: y\\r\\n\\r\\n",
            "header without colon | GET /v1/models HTTP/1.1\\r\\nHost: x\\r\\nNoColon\\r\\n\\r\\n",
            "percent ZZ in the path | GET /v1/models%ZZ HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n",
            "percent at the end of the path | GET /v1/models% HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n",
            "percent ZZ in the query | GET /v1/models?a=%ZZ HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n",
            "bad method | G@T /v1/models HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n",
            "junk request line | HELLO\\r\\n\\r\\n",
            "absolute URL with junk | GET http://[::1 HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n",
            "two Host headers | GET /v1/models HTTP/1.1\\r\\nHost: x\\r\\nHost: y\\r\\n\\r\\n",
    })
    void malformedHttpIs4xxWithAnOpenAiBody(String name, String request) throws Exception {
        assertThat(answer(request, 400, 499)).isNotNull();
    }

    /** Issue 35: what the gateway does not do is refused with the status that says so, not guessed at. */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "HTTP/9.9 | 505 | GET /v1/models HTTP/9.9\\r\\nHost: x\\r\\n\\r\\n",
            "HTTP/1.9 | 505 | GET /v1/models HTTP/1.9\\r\\nHost: x\\r\\n\\r\\n",
            "gzip then chunked | 501 | " + POST + "Transfer-Encoding: gzip, chunked\\r\\n\\r\\n2\\r\\n{}\\r\\n0\\r\\n\\r\\n",
            "gzip request body | 415 | " + POST + "Content-Encoding: gzip\\r\\nContent-Length: 2\\r\\n\\r\\n{}",
    })
    void unsupportedVersionsAndCodingsAreRefusedPlainly(String name, int status, String request) throws Exception {
        assertThat(answer(request, status, status)).isNotNull();
    }

    private String answer(String request, int lowest, int highest) throws Exception {
        String wire = request.replace("\\r", "\r").replace("\\n", "\n").replace("\\0", "\0");
        String response;
        try (RawHttp socket = new RawHttp(port)) {
            socket.trySend(wire);
            // One whole answer, whether the connection is then closed or kept.
            response = socket.readResponse(10_000);
        }
        assertThat(response).as("an answer").isNotBlank();
        int status = Integer.parseInt(response.substring(9, 12));
        assertThat(status).as(response).isBetween(lowest, highest);
        String body = response.substring(response.indexOf("\r\n\r\n") + 4);
        assertThat(body).as("an OpenAI error body").isNotBlank();
        JsonNode root = json(body);
        assertThat(root.propertyNames()).containsExactly("error");
        JsonNode error = root.get("error");
        assertThat(error.propertyNames()).containsExactlyInAnyOrder("message", "type", "param", "code");
        assertThat(error.get("type").asString()).isEqualTo("invalid_request_error");
        assertThat(body).doesNotContain("Exception", "\tat ");
        return response;
    }
}
