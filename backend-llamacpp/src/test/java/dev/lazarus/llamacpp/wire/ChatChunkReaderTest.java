package dev.lazarus.llamacpp.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/** The streaming reader gives exactly what data-binding gives, whatever the chunk's shape. */
class ChatChunkReaderTest {

    // as LlamaCppBackend builds it
    private static final JsonMapper JSON = JsonMapper.builder().disable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES).build();
    private final ChatChunkReader reader = new ChatChunkReader(JSON);

    static final List<String> CHUNKS = List.of(
            // llama-server: a token, with its timings
            """
            {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"Hel"}}],"created":1764130000,"id":"chatcmpl-x",\
            "model":"qwen","system_fingerprint":"b6000-abc","object":"chat.completion.chunk",\
            "timings":{"prompt_n":5,"prompt_ms":1.5,"predicted_n":2,"predicted_per_second":41.5}}""",
            // OpenAI: the role first, refusal null in the delta, logprobs null
            """
            {"id":"chatcmpl-B9","object":"chat.completion.chunk","created":1,"model":"gpt","system_fingerprint":"fp_1",\
            "choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]}""",
            """
            {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}""",
            // the usage chunk, with OpenAI's details and service tier
            """
            {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":1117,\
            "completion_tokens":20,"total_tokens":1137,"prompt_tokens_details":{"cached_tokens":1024,"audio_tokens":0},\
            "completion_tokens_details":{"reasoning_tokens":0}},"service_tier":"default"}""",
            // logprobs
            """
            {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hi"},\
            "logprobs":{"content":[{"token":"Hi","logprob":-0.25,"bytes":[72,105],"top_logprobs":[{"token":"Hi","logprob":-0.25,\
            "bytes":[72,105]},{"token":"Hello","logprob":-1.5,"bytes":null}]}]},"finish_reason":null}]}""",
            // tool calls and reasoning
            """
            {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":\
            [{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\\"city\\":"}}]},\
            "finish_reason":null}]}""",
            """
            {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":\
            {"reasoning_content":"think \\"hard\\" \\u00e9 🦙 \\n"},"finish_reason":null}]}""",
            // an error object in a chunk, nulls everywhere, odd types
            """
            {"error":{"code":500,"message":"Context size has been exceeded.","type":"server_error"}}""",
            """
            {"id":null,"object":null,"created":null,"model":null,"choices":null,"usage":null,"x":null}""",
            """
            {"id":"c","created":"123","choices":[{"index":"0","delta":{"content":"a"}}]}""",
            """
            {"id":"c","created":1.0,"choices":[{"index":0,"delta":null,"extra_in_choice":1}]}""",
            """
            {"choices":[{"index":0,"delta":{"content":"a","tool_calls":null}},{"index":1,"delta":{"content":"b"}}],"a":[1,{"b":2}],"c":true}""",
            "{}",
            " {\"id\":\"c\"} ");

    @Test
    void readsEveryShapeAsDataBindingDoes() {
        for (String chunk : CHUNKS) {
            byte[] framed = ("data: " + chunk + "\n").getBytes(StandardCharsets.UTF_8);
            int offset = 6;
            int length = framed.length - 7;
            ChatCompletionChunk expected = JSON.readValue(framed, offset, length, ChatCompletionChunk.class);
            assertThat(reader.read(framed, offset, length).withoutRaw()).as(chunk).isEqualTo(expected);
        }
    }

    @Test
    void readsTheUsualShapesByHand() {
        // the first eight (all but the error object) are what llama-server and OpenAI send
        for (String chunk : CHUNKS.subList(0, 7)) {
            byte[] bytes = chunk.getBytes(StandardCharsets.UTF_8);
            ChatCompletionChunk byHand = reader.readByHand(bytes, 0, bytes.length);
            assertThat(byHand).as(chunk).isNotNull();
            assertThat(byHand.withoutRaw()).as(chunk).isEqualTo(JSON.readValue(bytes, ChatCompletionChunk.class));
        }
    }

    @Test
    void keepsTheServersBytesWithTheIdentityToWriteOver() {
        // as the event decoder hands them: a slice of a larger piece
        for (String chunk : CHUNKS.subList(0, 7)) {
            byte[] framed = ("data: " + chunk + "\n\ndata: {\"id\":\"next\"}\n\n").getBytes(StandardCharsets.UTF_8);
            int length = chunk.getBytes(StandardCharsets.UTF_8).length;
            ChatCompletionChunk read = reader.read(framed, 6, length);
            assertThat(read.raw()).as(chunk).isNotNull();
            byte[] rewritten = read.raw().withIdentity("\"chatcmpl-gw\"".getBytes(StandardCharsets.UTF_8),
                    "42".getBytes(StandardCharsets.UTF_8), "\"served\"".getBytes(StandardCharsets.UTF_8));
            ObjectNode expected = (ObjectNode) JSON.readTree(chunk);
            expected.put("id", "chatcmpl-gw");
            expected.put("created", 42);
            expected.put("model", "served");
            assertThat(JSON.readTree(rewritten)).as(chunk).isEqualTo(expected);
        }
    }

    /** The chunk's bytes as the gateway passes them on, with a fixed identity written over, as a tree. */
    private static ObjectNode passedOn(ChatCompletionChunk chunk) {
        byte[] out = chunk.raw().withIdentity("\"i\"".getBytes(StandardCharsets.UTF_8),
                "1".getBytes(StandardCharsets.UTF_8), "\"m\"".getBytes(StandardCharsets.UTF_8));
        return (ObjectNode) JSON.readTree(out);
    }

    @Test
    void aTrimmedStreamKeepsTimingsOnTheFirstTokenAndTheUsageChunkOnly() {
        String timings = "\"timings\" : {\"cache_n\":4,\"prompt_n\":8,\"predicted_n\":1}";
        List<String> stream = List.of(
                "{\"id\":\"i\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}],"
                        + timings + "}",
                // timings first, then last, then in the middle
                "{" + timings + ",\"id\":\"i\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"}}]}",
                "{\"id\":\"i\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"c\"}}] , "
                        + timings + " }",
                "{\"id\":\"i\"," + timings + ",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"d\"}}]}",
                // the usage chunk, its usage after the timings
                "{\"id\":\"i\",\"created\":1,\"model\":\"m\",\"choices\":[]," + timings
                        + ",\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":4,\"total_tokens\":16}}");
        ChatChunkReader.TimingsTrim trim = new ChatChunkReader.TimingsTrim();
        for (int i = 0; i < stream.size(); i++) {
            String chunk = stream.get(i);
            byte[] bytes = chunk.getBytes(StandardCharsets.UTF_8);
            ChatCompletionChunk read = reader.read(bytes, 0, bytes.length, trim);
            ObjectNode sent = (ObjectNode) JSON.readTree(chunk);
            boolean kept = i == 0 || i == stream.size() - 1;
            if (!kept) {
                sent.remove("timings");
            }
            assertThat(read.extra().containsKey("timings")).as(chunk).isEqualTo(kept);
            assertThat(passedOn(read)).as(chunk).isEqualTo(sent);
            assertThat(read.withoutRaw()).as(chunk)
                    .isEqualTo(JSON.readValue(JSON.writeValueAsBytes(sent), ChatCompletionChunk.class));
        }
    }

    @Test
    void anUntrimmedStreamKeepsEveryChunksTimings() {
        String chunk = "{\"id\":\"i\",\"choices\":[],\"timings\":{\"prompt_n\":8}}";
        byte[] bytes = chunk.getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < 2; i++) {
            ChatCompletionChunk read = reader.read(bytes, 0, bytes.length);
            assertThat(read.extra()).containsKey("timings");
        }
    }

    @Test
    void brokenJsonFailsAsDataBindingFails() {
        for (String broken : List.of("{\"id\":\"c\"", "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]", "[1,2]", "nope",
                "{\"usage\":{\"prompt_tokens\":\"many\"}}")) {
            byte[] bytes = broken.getBytes(StandardCharsets.UTF_8);
            Class<? extends Throwable> expected = catchType(() -> JSON.readValue(bytes, ChatCompletionChunk.class));
            assertThatThrownBy(() -> reader.read(bytes, 0, bytes.length)).as(broken)
                    .isInstanceOf(JacksonException.class).isExactlyInstanceOf(expected);
        }
    }

    private static Class<? extends Throwable> catchType(Runnable r) {
        try {
            r.run();
        } catch (RuntimeException e) {
            return e.getClass();
        }
        throw new AssertionError("data-binding accepted it");
    }
}
