package dev.lazarus.kt.backend;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.openai.ChatCompletion;
import dev.lazarus.backend.api.openai.ChatCompletionAggregator;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.Logprobs;
import dev.lazarus.backend.api.openai.ToolCall;
import dev.lazarus.kt.synthetic.SyntheticModels;
import dev.lazarus.kt.testsupport.LlamaCpp;
import dev.lazarus.kt.testsupport.LlamaServerProcess;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code tool_choice: "required"} in the formats llama-server (b11669) reads with its own parsers — Qwen3.5's XML
 * calls, GLM-4.5's, gpt-oss's harmony channels — gives llama-server's greedy answer on a generated model with random
 * weights, where the grammar is all that shapes the output. The random model would stay in the free text before a
 * call, so the XML and GLM requests continue an assistant message that opened one (both servers feed that
 * prefill to the grammar as part of the generation prompt): the call's rules — names, parameters in any order,
 * schema-typed values, raw string values, the close — choose every token. gpt-oss's grammar allows no free text,
 * so there the call comes from the first token. Content, reasoning, calls (name and arguments), finish reason and
 * token counts must equal llama-server's.
 */
@Tag("llama-server")
class RequiredToolCallsLlamaServerTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    /** Non-string parameters, so a call can end before the token limit; an optional boolean after a bounded integer. */
    static final String TOOLS = """
            [{"type":"function","function":{"name":"set_level","description":"Set a level","parameters":{"type":"object",
              "properties":{"level":{"type":"integer","minimum":1,"maximum":7},"loud":{"type":"boolean"},
              "mode":{"enum":[1,2,3]}},"required":["level","mode"]}}},
             {"type":"function","function":{"name":"now","description":"The time","parameters":{"type":"object","properties":{}}}}]""";
    static final Map<String, Object> NOT_THINKING = Map.of("enable_thinking", false);

    @TempDir
    static Path dir;

    @BeforeAll
    static void requireLlamaCpp() {
        LlamaCpp.require();
    }

    @Test
    void qwen35XmlCalls() throws Exception {
        String prefill = "<tool_call>\n<function=set_level>\n";
        assertSameAnswers("qwen3.5.jinja", List.of(
                Case.of(body(prefill, "false", NOT_THINKING)),
                Case.of(body(prefill, "true", NOT_THINKING)),
                Case.of(body("<tool_call>\n", "false", NOT_THINKING)),
                Case.of(body(null, "false", NOT_THINKING)),
                Case.of(body(null, "true", Map.of()))));
    }

    /** Qwen3's Hermes JSON calls after an optional reasoning block. */
    @Test
    void qwen3HermesCallsAfterReasoning() throws Exception {
        String prefill = "<tool_call>\n{\"name\": \"set_level\", \"arguments\": ";
        assertSameAnswers("qwen3.jinja", List.of(
                Case.of(body(prefill, "false", NOT_THINKING)),
                Case.of(body("<tool_call>\n", "true", NOT_THINKING)),
                Case.of(body(null, "false", Map.of()))));
    }

    /**
     * Qwen3-Coder's layout (the template without a reasoning block): the first call may come without
     * {@code <tool_call>}, so a bare {@code <function=NAME>} opens it. (Qwen3.5's template without its generation
     * prompt's block, and with the tag it splits reasoning at renamed.)
     */
    @Test
    void qwen3CoderXmlCalls() throws Exception {
        String coder = resource("qwen3.5.jinja").replace("{{- '<think>\\n\\n</think>\\n\\n' }}", "")
                .replace("{{- '<think>\\n' }}", "").replace("<think>", "<thonk>").replace("</think>", "</thonk>");
        assertSameAnswers("qwen3-coder", coder, List.of(
                Case.of(body("<function=set_level>\n", "false", Map.of())),
                Case.of(body("<function=now>\n", "true", Map.of())),
                Case.of(body(null, "false", Map.of()))));
    }

    /**
     * kt-native continues an assistant message by appending its text to the generation prompt; llama-server renders
     * it through the template, which puts GLM's empty reasoning block before it. The bodies differ by that block so
     * that the prompts are the same (their token counts are compared).
     */
    @Test
    void glm45Calls() throws Exception {
        String call = "<tool_call>set_level\n";
        assertSameAnswers("glm-4.5.jinja", List.of(
                new Case(body("<think></think>\n" + call, "false", Map.of()), body(call, "false", Map.of())),
                new Case(body("\n" + call, "true", NOT_THINKING), body(call, "true", NOT_THINKING)),
                Case.of(body(null, "false", Map.of()))));
    }

    /**
     * DeepSeek-V3's calls, the template writing the arguments {@code | tojson} (as shipped it joins them as a string and
     * llama-server learns a format it never reads), and V3.1's as shipped. llama-server continues a V3 assistant
     * message after an empty reasoning block it adds; kt-native's body writes that block itself.
     */
    @Test
    void deepseekCalls() throws Exception {
        String call = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>set_level\n```json\n";
        assertSameAnswers("deepseek-v3-tools.jinja", List.of(
                new Case(body("<think></think>" + call, "false", Map.of()), body(call, "false", Map.of())),
                new Case(body("<think></think><｜tool▁calls▁begin｜>", "true", Map.of()), body("<｜tool▁calls▁begin｜>", "true", Map.of())),
                Case.of(body(null, "false", Map.of()))));
        assertSameAnswers("deepseek-v3.1.jinja", List.of(
                Case.of(body("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>set_level<｜tool▁sep｜>", "false", NOT_THINKING)),
                Case.of(body(null, "true", NOT_THINKING))));
    }

    @Test
    void gptOssHarmonyCalls() throws Exception {
        assertSameAnswers("gpt-oss.jinja", List.of(Case.of(body(null, "false", Map.of())), Case.of(body(null, "true", Map.of()))));
    }

    /** The body kt-native gets and the one llama-server gets (the same but for how a prefill is written). */
    record Case(String ours, String theirs) {
        static Case of(String body) {
            return new Case(body, body);
        }
    }

    private static String body(String prefill, String parallel, Map<String, Object> kwargs) throws Exception {
        String messages = "[{\"role\":\"user\",\"content\":\"Set the level to 3.\"}"
                + (prefill == null ? "" : ",{\"role\":\"assistant\",\"content\":" + JSON.writeValueAsString(prefill) + "}") + "]";
        return "{\"model\":\"m\",\"messages\":" + messages + ",\"max_tokens\":160,\"temperature\":0,\"logprobs\":true,"
                + "\"tool_choice\":\"required\",\"parallel_tool_calls\":" + parallel + ",\"chat_template_kwargs\":"
                + JSON.writeValueAsString(kwargs) + ",\"tools\":" + TOOLS + "}";
    }

    /**
     * The generated text (the bytes of the tokens {@code logprobs} lists), finish reason and token counts must be
     * llama-server's; without a prefill, and where the answer ended before the token limit, the parsed answer
     * (content, reasoning, calls) too. (A prefilled call opening is parsed by llama-server as part of the answer, by
     * kt-native as prompt; an answer cut inside a UTF-8 character ends in U+FFFD on kt-native, where llama-server
     * drops the partial character.)
     */
    private static void assertSameAnswers(String template, List<Case> cases) throws Exception {
        assertSameAnswers(template, resource(template), cases);
    }

    private static void assertSameAnswers(String template, String source, List<Case> cases) throws Exception {
        Path model = SyntheticModels.write(SyntheticModels.tinyLlama(), dir.resolve(template + ".gguf"), source);
        List<String> failures = new ArrayList<>();
        int calls = 0;
        try (LlamaServerProcess llama = LlamaServerProcess.start(model, "-c", "2048", "-np", "1", "--jinja");
                KtNativeBackend kt = new KtNativeBackend("kt", KtNativeSettings.from(new BackendConfig("kt", "kt-native",
                        Map.of("model", model.toString(), "threads", 2, "context-size", 2048, "model-name", "m"))))
                        .awaitReady(Duration.ofMinutes(1))) {
            for (Case c : cases) {
                boolean prefilled = c.theirs().contains("\"assistant\"");
                JsonNode response = JSON.readTree(llama.post("/v1/chat/completions", c.theirs()));
                JsonNode choice = response.path("choices").get(0);
                JsonNode message = choice.path("message");
                String raw = text(JSON.treeToValue(choice.path("logprobs"), Logprobs.class));
                String theirs = summary(raw, finish(choice.path("finish_reason").asString(), prefilled), response.path("usage"),
                        prefilled || choice.path("finish_reason").asString().equals("length") ? null : List.of(message.path("content").asString(""),
                                message.path("reasoning_content").asString(""), calls(message.path("tool_calls"))));
                ChatCompletionAggregator aggregator = new ChatCompletionAggregator();
                kt.chat(JSON.readValue(c.ours(), ChatCompletionRequest.class)).collectList().block(Duration.ofMinutes(1))
                        .forEach(aggregator::add);
                ChatCompletion result = aggregator.result();
                ChatCompletion.Choice ours = result.choices().getFirst();
                List<String> ourCalls = new ArrayList<>();
                if (ours.message().toolCalls() != null) {
                    for (ToolCall call : ours.message().toolCalls()) {
                        ourCalls.add(call.function().name() + " " + call.function().arguments());
                    }
                }
                String mine = summary(text(ours.logprobs()), finish(ours.finishReason(), prefilled), JSON.valueToTree(result.usage()),
                        prefilled || ours.finishReason().equals("length") ? null : List.of(ours.message().text() == null ? "" : ours.message().text(),
                                ours.message().reasoningContent() == null ? "" : ours.message().reasoningContent(), ourCalls));
                if (!mine.equals(theirs)) {
                    failures.add(template + " " + c.ours().substring(0, c.ours().indexOf(",\"tools\"")) + "\n kt-native    "
                            + mine + "\n llama-server " + theirs);
                }
                calls += raw.contains("\n</parameter>\n") || raw.contains("</arg_value>") || raw.contains("to=functions.")
                        || raw.contains("<｜tool▁call▁end｜>") || raw.contains("\"level\"") ? 1 : 0;
            }
        }
        assertThat(failures).isEmpty();
        assertThat(calls).as("call arguments were written: the call rules shaped the answers").isPositive();
    }

    /** A prefilled call ends in "tool_calls" where llama-server parses it, "stop" where kt-native does not. */
    private static String finish(String reason, boolean prefilled) {
        return prefilled && reason.equals("tool_calls") ? "stop" : reason;
    }

    /**
     * The text of the tokens the logprobs list, from their bytes, up to the last whole character (llama-server lists
     * no bytes for a last token that ends inside one, kt-native lists them).
     */
    private static String text(Logprobs logprobs) {
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        for (Logprobs.TokenLogprob t : logprobs.content()) {
            t.bytes().forEach(bytes::write);
        }
        String text = bytes.toString(StandardCharsets.UTF_8);
        return text.endsWith("\uFFFD") ? text.substring(0, text.length() - 1) : text;
    }

    private static List<String> calls(JsonNode toolCalls) {
        List<String> out = new ArrayList<>();
        for (JsonNode call : toolCalls) {
            out.add(call.path("function").path("name").asString() + " " + call.path("function").path("arguments").asString());
        }
        return out;
    }

    private static String summary(String raw, String finish, JsonNode usage, List<Object> parsed) throws Exception {
        return JSON.writeValueAsString(List.of(raw, finish, usage.path("prompt_tokens").asInt(),
                usage.path("completion_tokens").asInt(), parsed == null ? List.of() : parsed));
    }

    private static String resource(String name) {
        try (InputStream in = RequiredToolCallsLlamaServerTest.class.getResourceAsStream("/chat-templates/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
