package dev.lazarus.kt.backend;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.openai.ChatCompletion;
import dev.lazarus.backend.api.openai.ChatCompletionAggregator;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.backend.api.openai.MessageContent;
import dev.lazarus.backend.api.openai.Tool;
import dev.lazarus.backend.api.openai.ToolCall;
import dev.lazarus.kt.chat.ChatTemplate;
import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.synthetic.SyntheticModels;
import dev.lazarus.kt.testsupport.LlamaCpp;
import dev.lazarus.kt.testsupport.LlamaServerProcess;
import dev.lazarus.kt.tokenizer.Tokenizer;
import dev.lazarus.kt.tokenizer.Tokenizers;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
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
import tools.jackson.databind.node.ObjectNode;

/**
 * The answer's shape — content, {@code reasoning_content}, {@code tool_calls}, finish reason — is the one
 * llama-server gives for the same text under the same chat template, for each model family's template:
 * a generated model carries the template, kt-native writes the answer (a {@link ScriptedSampler}) and its
 * stream is aggregated; llama-server is made to write the same text. Without tools a grammar that matches
 * only that text forces it; llama-server refuses a grammar beside tools, so there the text is an assistant
 * prefill that llama-server parses with the end of turn it is forced to write at once (a logit bias).
 */
@Tag("llama-server")
class ChatFormatLlamaServerTest {

    static final JsonMapper JSON = JsonMapper.builder().build();
    static final Tool WEATHER = new Tool("function", new Tool.Function("get_weather", "Weather of a city",
            Map.of("type", "object", "properties", Map.of("city", Map.of("type", "string"), "days", Map.of("type", "integer")),
                    "required", List.of("city")), null));
    static final String HERMES_CALL = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";

    @TempDir
    static Path dir;

    @BeforeAll
    static void requireLlamaCpp() {
        LlamaCpp.require();
    }

    /**
     * One answer: the text the model writes, whether tools are offered, extra request fields, and with tools the
     * assistant message llama-server is given to read the same answer from (its content is the text unless given).
     */
    record Answer(String text, boolean tools, Map<String, Object> extra, Map<String, Object> prefill) {
        Answer(String text, boolean tools, Map<String, Object> extra) {
            this(text, tools, extra, Map.of("content", text));
        }

        static Answer of(String text) {
            return new Answer(text, false, Map.of());
        }

        static Answer withTools(String text) {
            return new Answer(text, true, Map.of());
        }
    }

    @Test
    void qwen3() {
        assertSameShapes("qwen3.jinja", List.of(
                Answer.of("<think>\nLet me think.\n</think>\n\nHello there."),
                Answer.of("\n<think>\nA\n\n</think>\n\n\nB"),
                Answer.of("\n  No thinking here."),
                Answer.of("Text <think>x</think> after."),
                new Answer("<think>\nLet me think.\n</think>\n\nHello there.", false,
                        Map.of("chat_template_kwargs", Map.of("enable_thinking", false))),
                new Answer("<think>\nLet me think.\n</think>\n\nHello there.", false, Map.of("reasoning_format", "none")),
                Answer.withTools(HERMES_CALL),
                Answer.withTools("Let me see.\n\n" + HERMES_CALL + "\n"
                        + HERMES_CALL.replace("\"Paris\"", "\"Oslo\", \"days\":  2.50"))));
    }

    @Test
    void deepseekR1OpensTheBlockInItsPrompt() {
        assertSameShapes("deepseek-r1.jinja", List.of(
                Answer.of("Let me think.\n</think>\n\nHello there."),
                new Answer("Let me think.\n</think>\n\nHello there.", false, Map.of("reasoning_format", "none")),
                Answer.of("Thinking that never ends"),
                Answer.of("<think>\nnested\n</think>\n\nHello")));
    }

    @Test
    void deepseekV3() {
        assertSameShapes("deepseek-v3.jinja", List.of(
                Answer.of("<think>\nhm\n</think>\n\nHello"),
                Answer.of("Hello")));
    }

    static final Map<String, Object> NOT_THINKING = Map.of("chat_template_kwargs", Map.of("enable_thinking", false));
    static final String DEEPSEEK_CALL = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
            + "{\"city\": \"Paris\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>";

    /**
     * DeepSeek's V3 template renders a call's {@code arguments} by string concatenation; llama-server (b11669)
     * learns the call format by rendering calls whose arguments are objects, so with the template as shipped it
     * learns a Python-dict format and answers every real call with 500 ("The model produced output that does not
     * match the expected peg-native format"). deepseek-v3-tools.jinja is that template with the arguments
     * written as JSON when they are not a string already, the fix llama.cpp's own DeepSeek template makes. The
     * R1 template cannot be compared this way: its prompt opens a {@code <think>} block, so kt-native reads the
     * generated text as reasoning first, while llama-server reads a prefilled assistant message as content.
     */
    @Test
    void deepseekV3Tools() {
        assertSameShapes("deepseek-v3-tools.jinja", List.of(
                Answer.withTools(DEEPSEEK_CALL),
                Answer.withTools("Let me see.\n\n" + DEEPSEEK_CALL),
                Answer.withTools(DEEPSEEK_CALL.replace("<｜tool▁calls▁end｜>", "\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>"
                        + "get_weather\n```json\n{\"city\": \"Oslo\", \"days\":  2.50}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"))));
    }

    /**
     * DeepSeek-V3.1 opens a reasoning block only when {@code enable_thinking} is set, which llama-server always
     * passes (true by default); its calls come in the non-thinking mode, as DeepSeek documents V3.1's tool use.
     */
    @Test
    void deepseekV31() {
        String call = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": \"Paris\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
        assertSameShapes("deepseek-v3.1.jinja", List.of(
                Answer.of("Let me think.</think>Hello"),
                new Answer("Let me think.</think>Hello", false, Map.of("reasoning_format", "none")),
                new Answer("Hello", false, NOT_THINKING),
                new Answer(call, true, NOT_THINKING),
                new Answer("Let me see." + call, true, NOT_THINKING)));
    }

    static final String DSML_CALL = "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"get_weather\">\n"
            + "<｜DSML｜parameter name=\"city\" string=\"true\">Paris</｜DSML｜parameter>\n</｜DSML｜invoke>\n"
            + "</｜DSML｜function_calls>";

    /**
     * DeepSeek-V3.2 (deepseek32): its prompt opens {@code <think>} in thinking mode (as R1's, not comparable through a
     * prefill, see {@link #deepseekV3Tools}); its DSML calls come in the non-thinking mode, whose prompt holds an empty
     * {@code <think></think>}.
     */
    @Test
    void deepseekV32() {
        assertSameShapes("deepseek-v3.2.jinja", List.of(
                Answer.of("Let me think.</think>Hello"),
                new Answer("Let me think.</think>Hello", false, Map.of("reasoning_format", "none")),
                new Answer("Hello", false, NOT_THINKING),
                new Answer(DSML_CALL, true, NOT_THINKING),
                new Answer("Let me see.\n\n" + DSML_CALL, true, NOT_THINKING),
                new Answer(DSML_CALL.replace("</｜DSML｜function_calls>", "<｜DSML｜invoke name=\"get_weather\">\n"
                        + "<｜DSML｜parameter name=\"city\" string=\"true\">Oslo</｜DSML｜parameter>\n"
                        + "<｜DSML｜parameter name=\"days\" string=\"false\">3</｜DSML｜parameter>\n</｜DSML｜invoke>\n"
                        + "</｜DSML｜function_calls>"), true, NOT_THINKING)));
    }

    @Test
    void glm45() {
        assertSameShapes("glm-4.5.jinja", List.of(
                Answer.of("\n<think>A\n</think>\n\nB"),
                new Answer("<think>A</think>B", false, Map.of("chat_template_kwargs", Map.of("enable_thinking", false))),
                Answer.withTools("OK\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value></tool_call>"),
                Answer.withTools("<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n"
                        + "<arg_key>days</arg_key>\n<arg_value>3</arg_value></tool_call>\n<tool_call>get_weather\n"
                        + "<arg_key>city</arg_key>\n<arg_value>123</arg_value></tool_call>")));
    }

    static final String XML_CALL = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
            + "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>";

    /**
     * Qwen3.5 (and Qwen3-Coder's family): XML calls, a {@code <think>} block the prompt opens unless thinking is off.
     * Calls come with thinking off (an empty closed block in the prompt), or after reasoning: llama-server reads that
     * from a prefill whose {@code reasoning_content} the template renders into the block the prompt opened, or (the
     * block ended by the call, not {@code </think>}) whose reasoning holds the call itself.
     */
    @Test
    void qwen35() {
        assertSameShapes("qwen3.5.jinja", List.of(
                new Answer("Hello there.", false, NOT_THINKING),
                Answer.of("Let me think.\n</think>\n\nHello there."),
                Answer.of("\nA \t\n\n\n</think>\n\n\nB \n\n"),
                Answer.of("Thinking that never ends"),
                new Answer("Let me think.\n</think>\n\nHello there.", false, Map.of("reasoning_format", "none")),
                new Answer(XML_CALL, true, NOT_THINKING),
                new Answer("Let me see. \n\n" + XML_CALL, true, NOT_THINKING),
                new Answer(XML_CALL + "\n" + XML_CALL.replace("Paris", "New York\nCity").replace("\n3\n", "\n2.50\n"), true,
                        NOT_THINKING),
                new Answer(XML_CALL + "\nAfter the call", true, NOT_THINKING),
                new Answer("Let me see.\n</think>\n\n" + XML_CALL, true, Map.of(),
                        Map.of("reasoning_content", "Let me see.", "content", XML_CALL)),
                new Answer("Let me see.\n" + XML_CALL, true, Map.of(),
                        Map.of("reasoning_content", "Let me see.\n" + XML_CALL, "content", " "))));
    }

    @Test
    void qwen35PromptWithToolsAndACall() throws Exception {
        assertSamePromptWithToolsAndACall("qwen3.5.jinja", "<parameter=days>\n3\n</parameter>");
    }

    static final String MINIMAX_CALL = "<minimax:tool_call>\n<invoke name=\"get_weather\">\n"
            + "<parameter name=\"city\">Paris</parameter>\n</invoke>\n</minimax:tool_call>";

    /**
     * MiniMax-M2: its prompt always opens {@code <think>}, so calls come after reasoning; llama-server reads them from a
     * prefill whose {@code reasoning_content} the template renders into the block the prompt opened. Its parser
     * separates a block's calls by {@code ", "} (see MiniMaxCalls), the form compared here.
     */
    @Test
    void minimaxM2() {
        String twoCalls = MINIMAX_CALL.replace("</invoke>\n</minimax", "</invoke>\n, <invoke name=\"get_weather\">\n"
                + "<parameter name=\"city\">New York\nCity </parameter>\n<parameter name=\"days\">2.50</parameter>\n"
                + "</invoke>\n</minimax");
        assertSameShapes("minimax-m2.jinja", List.of(
                Answer.of("Let me think.\n</think>\n\nHello there."),
                Answer.of("\nA \t\n\n\n</think>\n\n\nB \n\n"),
                Answer.of("Thinking that never ends"),
                new Answer("Let me think.\n</think>\n\nHello there.", false, Map.of("reasoning_format", "none")),
                afterReasoning("Let me see.", MINIMAX_CALL),
                afterReasoning("Let me see.", "Checking. \n\n" + MINIMAX_CALL),
                afterReasoning("Let me see.", twoCalls),
                afterReasoning("Let me see.", MINIMAX_CALL.replace("Paris</parameter>\n",
                        "Paris</parameter>\n  <parameter name=\"days\">3</parameter>\n \n")),
                afterReasoning("Let me see.", "No call after all."),
                new Answer("Let me see.\n" + MINIMAX_CALL, true, Map.of(),
                        Map.of("reasoning_content", "Let me see.\n" + MINIMAX_CALL, "content", ""))));
    }

    @Test
    void minimaxM2PromptWithToolsAndACall() throws Exception {
        assertSamePromptWithToolsAndACall("minimax-m2.jinja", "<parameter name=\"days\">3</parameter>");
    }

    /** An answer with tools whose reasoning the prompt opened: the text generated, and the prefill that renders it. */
    private static Answer afterReasoning(String reasoning, String content) {
        return new Answer(reasoning + "\n</think>\n\n" + content, true, Map.of(),
                Map.of("reasoning_content", reasoning, "content", content));
    }

    /**
     * The prompt of a conversation with tools, a call in the history (reasoning, text and typed arguments) and its
     * result is llama-server's, with thinking on and off.
     */
    private void assertSamePromptWithToolsAndACall(String templateFile, String renderedArgument) throws Exception {
        List<ChatMessage> messages = List.of(ChatMessage.system("Be brief."), ChatMessage.user("Weather in Paris?"),
                new ChatMessage("assistant", MessageContent.ofText("Checking."), null, List.of(new ToolCall(null, "call_1",
                        "function", new ToolCall.FunctionCall("get_weather", "{\"city\": \"Paris\", \"days\": 3}"))),
                        null, "The user wants weather.", null),
                new ChatMessage("tool", MessageContent.ofText("Sunny, 21 C"), null, null, "call_1", null, null));
        Path model = SyntheticModels.write(SyntheticModels.tinyLlama(), dir.resolve(templateFile + "-prompt.gguf"),
                resource("/chat-templates/" + templateFile));
        ChatTemplate template;
        try (GgufFile file = GgufFile.open(model)) {
            template = ChatTemplate.fromMetadata(file.metadata(), Tokenizers.fromMetadata(file.metadata()));
        }
        try (LlamaServerProcess server = LlamaServerProcess.start(model, "-c", "2048", "--jinja")) {
            for (boolean thinking : List.of(true, false)) {
                ObjectNode body = JSON.createObjectNode();
                body.putPOJO("messages", messages);
                body.putPOJO("tools", List.of(WEATHER));
                body.putPOJO("chat_template_kwargs", Map.of("enable_thinking", thinking));
                String theirs = JSON.readTree(server.post("/apply-template", JSON.writeValueAsString(body))).path("prompt")
                        .asString();
                String ours = template.render(messages, List.of(WEATHER), true, Map.of("enable_thinking", thinking));
                assertThat(ours).as("thinking %s", thinking).isEqualTo(theirs).contains(renderedArgument);
            }
        }
    }

    @Test
    void llama3() {
        assertSameShapes("llama3.jinja", List.of(
                Answer.of("Hello."),
                Answer.of("\n Hello."),
                Answer.withTools("\n {\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}"),
                Answer.withTools("Sure: {\"type\": \"function\", \"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\", \"days\": 2}}")));
    }

    @Test
    void gptOssChannels() {
        assertSameShapes("gpt-oss.jinja", List.of(
                Answer.of("<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final<|message|>Hello"),
                Answer.of("<|channel|>final<|message|>Hi")));
    }

    private void assertSameShapes(String templateFile, List<Answer> answers) {
        Path model = SyntheticModels.write(SyntheticModels.tinyLlama(), dir.resolve(templateFile + ".gguf"),
                resource("/chat-templates/" + templateFile));
        Tokenizer tokenizer;
        ChatTemplate template;
        try (GgufFile file = GgufFile.open(model)) {
            tokenizer = Tokenizers.fromMetadata(file.metadata());
            template = ChatTemplate.fromMetadata(file.metadata(), tokenizer);
        }
        int endOfTurn = tokenizer.eos();
        String[] script = new String[1];
        List<String> failures = new ArrayList<>();
        try (LlamaServerProcess server = LlamaServerProcess.start(model, "-c", "2048", "--jinja");
             KtNativeBackend backend = new KtNativeBackend("kt", KtNativeSettings.from(new BackendConfig("kt", "kt-native",
                     Map.of("model", model.toString(), "threads", 2, "context-size", 2048, "model-name", "m"))),
                     (params, vocab, context) -> new ScriptedSampler(tokenizer, script[0], endOfTurn))
                     .awaitReady(Duration.ofMinutes(1))) {
            for (Answer answer : answers) {
                script[0] = answer.text();
                JsonNode response = JSON.readTree(server.post("/v1/chat/completions", llamaServerRequest(answer, endOfTurn, false)));
                Shape theirs = Shape.of(response.path("choices").get(0));
                List<ChatCompletionChunk> chunks = backend.chat(ktRequest(answer)).collectList().block(Duration.ofMinutes(1));
                ChatCompletionAggregator aggregator = new ChatCompletionAggregator();
                chunks.forEach(aggregator::add);
                Shape ours = Shape.of(aggregator.result().choices().getFirst());
                if (!ours.equals(theirs)) {
                    failures.add("%s %s:%n kt-native    %s%n llama-server %s".formatted(JSON.writeValueAsString(answer.text()),
                            answer.extra(), ours, theirs));
                }
                if (!answer.tools()) { // the same prompt (chat_template_kwargs rendered), and the same stream
                    String theirPrompt = JSON.readTree(server.post("/apply-template", llamaServerRequest(answer, endOfTurn, false)))
                            .path("prompt").asString();
                    String ourPrompt = template.render(List.of(ChatMessage.user("hi")), List.of(), true,
                            ChatAnswer.templateKwargs(ktRequest(answer), template.format()));
                    if (!ourPrompt.equals(theirPrompt)) {
                        failures.add("%s %s: prompt%n kt-native    %s%n llama-server %s".formatted(
                                JSON.writeValueAsString(answer.text()), answer.extra(), JSON.writeValueAsString(ourPrompt),
                                JSON.writeValueAsString(theirPrompt)));
                    }
                    Streamed theirStream = Streamed.of(postStream(server, llamaServerRequest(answer, endOfTurn, true)));
                    Streamed ourStream = Streamed.of(chunks);
                    if (!ourStream.equals(theirStream)) {
                        failures.add("%s %s streamed:%n kt-native    %s%n llama-server %s".formatted(
                                JSON.writeValueAsString(answer.text()), answer.extra(), ourStream, theirStream));
                    }
                }
            }
        } catch (Exception e) {
            throw new AssertionError(e);
        }
        assertThat(failures).as(templateFile).isEmpty();
    }

    /**
     * A streamed request on a connection of its own: llama-server closes the connection after a stream, and a
     * pooled connection reused after that fails ("header parser received no bytes").
     */
    private static String postStream(LlamaServerProcess server, String body) throws Exception {
        try (HttpClient http = HttpClient.newHttpClient()) {
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(server.url().resolve("/v1/chat/completions"))
                    .timeout(Duration.ofMinutes(1)).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
            return response.body();
        }
    }

    private static ChatCompletionRequest ktRequest(Answer answer) {
        ChatCompletionRequest.Builder b = ChatCompletionRequest.builder().model("m").messages(List.of(ChatMessage.user("hi")))
                .maxTokens(400);
        if (answer.tools()) {
            b.tools(List.of(WEATHER));
        }
        ChatCompletionRequest request = b.build();
        request.extra().putAll(answer.extra());
        return request;
    }

    private static String llamaServerRequest(Answer answer, int endOfTurn, boolean stream) {
        ObjectNode body = JSON.createObjectNode().put("temperature", 0).put("stream", stream);
        body.putPOJO("messages", answer.tools()
                ? List.of(Map.of("role", "user", "content", "hi"), assistant(answer.prefill()))
                : List.of(Map.of("role", "user", "content", "hi")));
        if (answer.tools()) {
            body.putPOJO("tools", List.of(WEATHER));
            body.put("max_tokens", 4);
            body.putPOJO("logit_bias", List.of(List.of(endOfTurn, 100)));
        } else {
            body.put("max_tokens", 400);
            body.put("grammar", "root ::= " + JSON.writeValueAsString(answer.text()));
        }
        answer.extra().forEach(body::putPOJO);
        return JSON.writeValueAsString(body);
    }

    private static Map<String, Object> assistant(Map<String, Object> prefill) {
        Map<String, Object> message = new java.util.LinkedHashMap<>(prefill);
        message.put("role", "assistant");
        return message;
    }

    /**
     * A stream as a client reads it: the reasoning and the content deltas, each concatenated, and whether the
     * reasoning all came before the content.
     */
    record Streamed(String reasoning, String content, boolean reasoningFirst) {

        static Streamed of(List<ChatCompletionChunk> chunks) {
            StringBuilder reasoning = new StringBuilder();
            StringBuilder content = new StringBuilder();
            boolean first = true;
            for (ChatCompletionChunk c : chunks) {
                for (ChatCompletionChunk.Choice choice : c.choices()) {
                    ChatCompletionChunk.Delta d = choice.delta();
                    if (d != null && d.reasoningContent() != null && !d.reasoningContent().isEmpty()) {
                        first &= content.isEmpty();
                        reasoning.append(d.reasoningContent());
                    }
                    if (d != null && d.content() != null) {
                        content.append(d.content());
                    }
                }
            }
            return new Streamed(reasoning.toString(), content.toString(), first);
        }

        /** llama-server's SSE lines, {@code data: {...}} up to {@code data: [DONE]}. */
        static Streamed of(String sse) {
            List<ChatCompletionChunk> chunks = new ArrayList<>();
            for (String line : sse.split("\n")) {
                if (line.startsWith("data: {")) {
                    chunks.add(JSON.readValue(line.substring(6), ChatCompletionChunk.class));
                }
            }
            return of(chunks);
        }
    }

    /** What a client reads of an answer; absent content or reasoning is "" (llama-server sends "" beside calls, OpenAI null). */
    record Shape(String content, String reasoning, List<String> calls, String finishReason) {

        static Shape of(JsonNode choice) {
            JsonNode m = choice.path("message");
            List<String> calls = new ArrayList<>();
            m.path("tool_calls").forEach(c -> calls.add(c.path("function").path("name").asString() + " "
                    + c.path("function").path("arguments").asString()));
            return new Shape(m.path("content").asString(""), m.path("reasoning_content").asString(""), calls,
                    choice.path("finish_reason").asString());
        }

        static Shape of(ChatCompletion.Choice choice) {
            ChatMessage m = choice.message();
            List<String> calls = new ArrayList<>();
            if (m.toolCalls() != null) {
                for (ToolCall c : m.toolCalls()) {
                    calls.add(c.function().name() + " " + c.function().arguments());
                }
            }
            return new Shape(m.content() == null ? "" : m.text(), m.reasoningContent() == null ? "" : m.reasoningContent(),
                    calls, choice.finishReason());
        }
    }

    private static String resource(String name) {
        try (InputStream in = ChatFormatLlamaServerTest.class.getResourceAsStream(name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
