package dev.lazarus.llamacpp.wire;

import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.ContextLengthExceededException;
import dev.lazarus.backend.api.Redactor;
import io.netty.channel.ConnectTimeoutException;
import java.io.IOException;
import java.net.ConnectException;
import java.time.Clock;
import java.util.Locale;
import java.util.regex.Pattern;
import reactor.netty.http.client.PrematureCloseException;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * llama-server's and other OpenAI-compatible servers' failures as typed {@link BackendException}s.
 * llama-server's error body is {@code {"error":{"code":400,"message":"...","type":"exceed_context_size_error"}}};
 * the same object can also arrive inside an event stream after the 200 was sent, which is how a
 * context overflow under concurrency ("Context size has been exceeded", code 500) usually shows.
 * OpenAI sends {@code {"error":{"message","type","param","code":"context_length_exceeded"}}}; vLLM
 * and SGLang send {@code {"object":"error","message","type":"BadRequestError","param","code":400}}
 * (newer vLLM wraps it in {@code "error"}). An OpenAI-style word in {@code code} travels with the
 * failure, so a client sees the upstream's {@code code}, {@code type} and {@code param}.
 */
public final class UpstreamErrors {

    /** Longest piece of a non-JSON error body quoted in a message. */
    private static final int MAX_QUOTED = 300;

    /**
     * How servers word a prompt too long for them: llama.cpp "exceeds the available context size",
     * OpenAI and vLLM "This model's maximum context length is N tokens", SGLang "is longer than the
     * model's context length", hosted APIs "context window".
     */
    private static final Pattern CONTEXT_WORDING = Pattern.compile("context (size|length|window)");

    private final JsonMapper json;
    private final Clock clock;
    private final Redactor redactor;
    /** How messages name the server: "llama-server", or "the OpenAI-compatible server". */
    private final String server;

    public UpstreamErrors(JsonMapper json, Clock clock) {
        this(json, clock, Redactor.shapesOnly());
    }

    /** @param redactor applied to every piece of llama-server's text these errors carry */
    public UpstreamErrors(JsonMapper json, Clock clock, Redactor redactor) {
        this(json, clock, redactor, "llama-server");
    }

    public UpstreamErrors(JsonMapper json, Clock clock, Redactor redactor, String server) {
        this.json = json;
        this.clock = clock;
        this.redactor = redactor;
        this.server = server;
    }

    /** An HTTP error answer: its status, body and {@code Retry-After} header (may be null). */
    public BackendException fromStatus(int status, String body, String retryAfter) {
        JsonNode error = errorObject(body);
        String message = error != null && error.hasNonNull("message")
                ? error.get("message").asString()
                : redactor.quote(body, MAX_QUOTED);
        BackendException classified = classify(status, error, message, retryAfter);
        return MissingPathException.missing(status) ? new MissingPathException(status, classified) : classified;
    }

    /** An {@code error} object found inside an event stream. */
    public BackendException fromStreamError(JsonNode error) {
        JsonNode inner = error.has("error") ? error.get("error") : error;
        if (!inner.isObject()) {
            return new BackendException(BackendErrorKind.UPSTREAM,
                    server + " reported an error mid-stream: " + redactor.quote(inner.toString(), MAX_QUOTED));
        }
        // llama.cpp and vLLM put the HTTP status in "code"; OpenAI puts a word there.
        int status = inner.path("code").isIntegralNumber() ? inner.path("code").asInt() : 500;
        return classify(status, inner, inner.path("message").asString("(no message)"), null);
    }

    /** A whole answer that is not one JSON object; the parser's message quotes it, so it is redacted. */
    public BackendException malformedAnswer(String why) {
        return new BackendException(BackendErrorKind.UPSTREAM, server + " sent a malformed answer: "
                + redactor.quote(why, MAX_QUOTED));
    }

    /**
     * Any failure of a call: typed ones pass through, transport failures are classified. Messages are
     * redacted: a parser's quotes the text it choked on, a connection error names what it was sent.
     */
    public Throwable fromThrowable(Throwable t) {
        if (t instanceof BackendException) {
            return t;
        }
        // ConnectTimeoutException is a ConnectException too: test it first.
        if (t instanceof ConnectTimeoutException) {
            return new BackendException(BackendErrorKind.TIMEOUT, "connecting to " + server + " timed out", t);
        }
        if (t instanceof ConnectException) {
            return new BackendException(BackendErrorKind.UNAVAILABLE, server + " refused the connection: " + redactor.redact(t.getMessage()), t);
        }
        if (t instanceof PrematureCloseException) {
            return new BackendException(BackendErrorKind.UPSTREAM, server + " closed the connection before the answer was complete", t);
        }
        if (t instanceof SseDecoder.MalformedStreamException || t instanceof JacksonException) {
            return new BackendException(BackendErrorKind.UPSTREAM, server + " sent a malformed event stream: " + redactor.quote(t.getMessage(), MAX_QUOTED), t);
        }
        if (t.getClass().getSimpleName().equals("PoolAcquireTimeoutException")
                || t.getClass().getSimpleName().equals("PoolAcquirePendingLimitException")) {
            // reactor-netty shades its pool, so the type is matched by name
            return new BackendException(BackendErrorKind.OVERLOADED, "all connections to " + server + " are busy", null, null, t);
        }
        if (t instanceof IOException) {
            return new BackendException(BackendErrorKind.UPSTREAM, "connection to " + server + " failed: " + redactor.redact(t.getMessage()), t);
        }
        return new BackendException(BackendErrorKind.INTERNAL, server + " call failed: " + redactor.redact(t.toString()), t);
    }

    private BackendException classify(int status, JsonNode error, String upstreamMessage, String retryAfter) {
        String message = redactor.redact(upstreamMessage);
        String lower = message.toLowerCase(Locale.ROOT);
        String type = error == null ? "" : error.path("type").asString("");
        // OpenAI's own errors carry a word in "code"; llama.cpp, vLLM and SGLang put the status there.
        String code = error != null && error.path("code").isString() ? error.path("code").asString() : null;
        String param = error != null && error.path("param").isString() ? error.path("param").asString() : null;
        String openAiType = code != null && !type.isEmpty() ? type : null;
        if (ContextLengthExceededException.TYPE.equals(type) && error.path("n_prompt_tokens").isInt()
                && error.path("n_ctx").isInt()) {
            // llama-server's own: its type and sizes reach the client as kt-native's do
            return new ContextLengthExceededException(message, error.path("n_prompt_tokens").asInt(),
                    error.path("n_ctx").asInt(), param != null ? param : "messages");
        }
        if ("context_length_exceeded".equals(code) || "exceed_context_size_error".equals(type)
                || (status == 400 || status == 413 || status == 422) && CONTEXT_WORDING.matcher(lower).find()) {
            // Another backend may have a longer context: a route tries it (BackendErrorKind says so).
            return new BackendException(BackendErrorKind.CONTEXT_LENGTH_EXCEEDED, message,
                    param != null ? param : "messages", null, openAiType, code, null);
        }
        if (status >= 500 && lower.contains("context size has been exceeded")) {
            // Under concurrency the KV cache fills while decoding; a bigger context may still serve it.
            return BackendException.contextLengthExceeded(message);
        }
        return switch (status) {
            // content_policy_violation, content_filter, a bad parameter: the client's business, code kept
            case 400, 413, 422 -> new BackendException(BackendErrorKind.INVALID_REQUEST, message, param, null,
                    openAiType, code, null);
            case 401, 403 -> new BackendException(BackendErrorKind.UNAVAILABLE,
                    server + " rejected the configured api-key (" + status + ")");
            case 404 -> new BackendException(BackendErrorKind.MODEL_NOT_FOUND, server + ": " + message, param,
                    null, openAiType, code, null);
            // llama-server without --embeddings or --reranking: this server does not serve it, another may.
            case 501 -> new BackendException(BackendErrorKind.MODEL_NOT_FOUND, server + " does not serve this: " + message,
                    param, null, openAiType, code, null);
            // An exhausted quota does not come back in seconds: no retry here, the next backend at once.
            case 429 -> "insufficient_quota".equals(code) || "insufficient_quota".equals(type)
                    ? BackendException.unavailable(server + "'s account is out of quota: " + message)
                    : BackendException.overloaded(server + " is busy: " + message, RetryAfter.parse(retryAfter, clock));
            case 503 -> BackendException.unavailable(server + " is unavailable: " + message);
            default -> new BackendException(BackendErrorKind.UPSTREAM, server + " answered " + status + ": " + message);
        };
    }

    /** OpenAI's {@code {"error":{...}}}, or vLLM's and SGLang's {@code {"object":"error", ...}} at the top. */
    private JsonNode errorObject(String body) {
        if (body == null || body.isBlank()) {
            return null;
        }
        try {
            JsonNode root = json.readTree(body);
            JsonNode error = root.path("error");
            if (error.isObject()) {
                return error;
            }
            return "error".equals(root.path("object").asString("")) ? root : null;
        } catch (JacksonException notJson) {
            return null;
        }
    }
}
