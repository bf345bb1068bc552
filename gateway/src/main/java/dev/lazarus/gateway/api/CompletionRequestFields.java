package dev.lazarus.gateway.api;

import static dev.lazarus.gateway.api.RawBodyReader.bool;
import static dev.lazarus.gateway.api.RawBodyReader.integer;
import static dev.lazarus.gateway.api.RawBodyReader.longInteger;
import static dev.lazarus.gateway.api.RawBodyReader.number;
import static dev.lazarus.gateway.api.RawBodyReader.string;
import static dev.lazarus.gateway.api.RawBodyReader.taken;

import dev.lazarus.backend.api.openai.CompletionRequest;
import dev.lazarus.backend.api.openai.RawRequest;
import dev.lazarus.backend.api.openai.StreamOptions;
import java.util.ArrayList;
import java.util.List;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;

/**
 * The common legacy completion request read in one pass of Jackson's streaming parser
 * ({@link RawBodyReader}, with a new instance of these fields per body), keeping the body's bytes ({@link RawRequest}) so that an HTTP backend sends
 * them on: a prompt that is a string, an array of strings, of token ids or of token-id arrays; the
 * sampling scalars, {@code stream_options} and unknown fields. Anything else ({@code logit_bias}, a
 * null, a value of another type, an empty or mixed prompt array, a repeated field) gives null, and
 * data-binding reads the request, and says what is wrong with a bad one.
 */
final class CompletionRequestFields implements RawBodyReader.Fields<CompletionRequest> {

    Object prompt;
    String suffix;
    Integer maxTokens;
    Double temperature;
    Double topP;
    Integer n;
    Boolean stream;
    StreamOptions streamOptions;
    Integer logprobs;
    Boolean echo;
    List<String> stop;
    Double presencePenalty;
    Double frequencyPenalty;
    Integer bestOf;
    Long seed;
    String user;

    @Override
    public RawBodyReader.Field read(String name, JsonParser p, JsonToken v) {
        return switch (name) {
            case "prompt" -> taken(prompt = prompt(p, v));
            case "suffix" -> taken(suffix = string(p, v));
            case "max_tokens" -> taken(maxTokens = integer(p, v));
            case "temperature" -> taken(temperature = number(p, v));
            case "top_p" -> taken(topP = number(p, v));
            case "n" -> taken(n = integer(p, v));
            case "stream" -> taken(stream = bool(v));
            case "stream_options" -> taken(streamOptions = RawBodyReader.streamOptions(p, v));
            case "logprobs" -> taken(logprobs = integer(p, v));
            case "echo" -> taken(echo = bool(v));
            case "stop" -> taken(stop = RawBodyReader.stop(p, v));
            case "presence_penalty" -> taken(presencePenalty = number(p, v));
            case "frequency_penalty" -> taken(frequencyPenalty = number(p, v));
            case "best_of" -> taken(bestOf = integer(p, v));
            case "seed" -> taken(seed = longInteger(p, v));
            case "user" -> taken(user = string(p, v));
            case "logit_bias" -> RawBodyReader.Field.REFUSED; // bound by data-binding
            default -> RawBodyReader.Field.UNKNOWN;
        };
    }

    @Override
    public CompletionRequest request(RawBodyReader.Body body) {
        return new CompletionRequest(body.model(), prompt, suffix, maxTokens, temperature, topP, n,
                stream, streamOptions, logprobs, echo, stop, presencePenalty, frequencyPenalty,
                bestOf, null, seed, user, body.extra()).withRaw(body.raw());
    }

    /**
     * A string, or a non-empty array of strings, of token ids (ints) or of token-id arrays, as data-binding
     * binds it to {@code Object}; null for anything else.
     */
    private static Object prompt(JsonParser p, JsonToken v) {
        if (v == JsonToken.VALUE_STRING) {
            return p.getString();
        }
        if (v != JsonToken.START_ARRAY) {
            return null;
        }
        JsonToken first = p.nextToken();
        return switch (first) {
            case VALUE_STRING -> RawBodyReader.strings(p, first);
            case VALUE_NUMBER_INT -> tokens(p, first);
            case START_ARRAY -> tokenArrays(p);
            case null, default -> null;
        };
    }

    /** Token ids (ints) from the array's current token {@code t} to its end; null where one is anything else. */
    private static List<Integer> tokens(JsonParser p, JsonToken t) {
        List<Integer> ids = new ArrayList<>();
        while (t == JsonToken.VALUE_NUMBER_INT && p.getNumberType() == JsonParser.NumberType.INT) {
            ids.add(p.getIntValue());
            t = p.nextToken();
        }
        return t == JsonToken.END_ARRAY ? ids : null;
    }

    /** Arrays of token ids, the first one's start read, to the outer array's end. */
    private static List<List<Integer>> tokenArrays(JsonParser p) {
        List<List<Integer>> arrays = new ArrayList<>();
        JsonToken t = JsonToken.START_ARRAY;
        while (t == JsonToken.START_ARRAY) {
            List<Integer> ids = tokens(p, p.nextToken());
            if (ids == null) {
                return null;
            }
            arrays.add(ids);
            t = p.nextToken();
        }
        return t == JsonToken.END_ARRAY ? arrays : null;
    }
}
