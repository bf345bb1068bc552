package dev.lazarus.kt.chat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.backend.api.openai.ContentPart;
import dev.lazarus.backend.api.openai.MessageContent;
import dev.lazarus.backend.api.openai.Tool;
import dev.lazarus.backend.api.openai.ToolCall;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ChatTemplateTest {

    private static final Clock JULY_26_2024 = Clock.fixed(Instant.parse("2024-07-26T10:00:00Z"), ZoneOffset.UTC);

    private static ChatTemplate template(String name, String bos, String eos) {
        try (InputStream in = ChatTemplateTest.class.getResourceAsStream("/chat-templates/" + name)) {
            return ChatTemplate.of(new String(in.readAllBytes(), StandardCharsets.UTF_8), bos, eos).withClock(JULY_26_2024);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Tool weatherTool() {
        Map<String, Object> city = new LinkedHashMap<>();
        city.put("type", "string");
        Map<String, Object> properties = new LinkedHashMap<>();
        properties.put("city", city);
        Map<String, Object> parameters = new LinkedHashMap<>();
        parameters.put("type", "object");
        parameters.put("properties", properties);
        parameters.put("required", List.of("city"));
        return new Tool("function", new Tool.Function("get_weather", "Get weather", parameters, null));
    }

    private static ChatMessage toolCalls(String content, String reasoning, ToolCall... calls) {
        return new ChatMessage("assistant", content == null ? null : MessageContent.ofText(content), null, List.of(calls),
                null, reasoning, null);
    }

    private static ToolCall call(String name, String arguments) {
        return new ToolCall(null, "call_1", "function", new ToolCall.FunctionCall(name, arguments));
    }

    private static ChatMessage toolResult(String content) {
        return new ChatMessage("tool", MessageContent.ofText(content), null, null, "call_1", null, null);
    }

    @Test
    void qwen25RendersToolsToolCallsAndToolResults() {
        String out = template("qwen2.5.jinja", "", "<|im_end|>").render(List.of(
                ChatMessage.system("You are helpful."),
                ChatMessage.user("What's the weather in Paris?"),
                toolCalls(null, null, call("get_weather", "{\"city\":\"Paris\"}")),
                toolResult("{\"temp\": 21}")), List.of(weatherTool()), true);
        assertThat(out).isEqualTo("<|im_start|>system\nYou are helpful.\n\n# Tools\n\nYou may call one or more functions to "
                + "assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n"
                + "<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"description\": \"Get weather\", "
                + "\"parameters\": {\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}}, \"required\": "
                + "[\"city\"]}}}\n</tools>\n\nFor each function call, return a json object with function name and arguments "
                + "within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": "
                + "<args-json-object>}\n</tool_call><|im_end|>\n"
                + "<|im_start|>user\nWhat's the weather in Paris?<|im_end|>\n"
                + "<|im_start|>assistant\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n"
                + "</tool_call><|im_end|>\n"
                + "<|im_start|>user\n<tool_response>\n{\"temp\": 21}\n</tool_response><|im_end|>\n"
                + "<|im_start|>assistant\n");
    }

    @Test
    void qwen25AddsItsDefaultSystemPromptAndReadsContentParts() {
        ChatMessage parts = new ChatMessage("user", MessageContent.ofParts(List.of(ContentPart.text("Hello "),
                ContentPart.text("there"))), null, null, null, null, null);
        String out = template("qwen2.5.jinja", "", "").render(List.of(parts), null, false);
        assertThat(out).isEqualTo("<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful "
                + "assistant.<|im_end|>\n<|im_start|>user\nHello there<|im_end|>\n");
    }

    @Test
    void llama3UsesTodaysDateTrimsTheSystemMessageAndAddsBos() {
        String out = template("llama3.jinja", "<|begin_of_text|>", "<|eot_id|>").render(List.of(
                ChatMessage.system("  Be brief.  "), ChatMessage.user("Hi"), ChatMessage.assistant("Hello!"),
                ChatMessage.user("Bye")), null, true);
        assertThat(out).isEqualTo("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
                + "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\nBe brief.<|eot_id|>"
                + "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
                + "<|start_header_id|>assistant<|end_header_id|>\n\nHello!<|eot_id|>"
                + "<|start_header_id|>user<|end_header_id|>\n\nBye<|eot_id|>"
                + "<|start_header_id|>assistant<|end_header_id|>\n\n");
    }

    @Test
    void llama3PutsToolsIndentedIntoTheFirstUserMessage() {
        String out = template("llama3.jinja", "<|begin_of_text|>", "<|eot_id|>")
                .render(List.of(ChatMessage.user("Weather in Paris?")), List.of(weatherTool()), true);
        String toolJson = """
                {
                    "type": "function",
                    "function": {
                        "name": "get_weather",
                        "description": "Get weather",
                        "parameters": {
                            "type": "object",
                            "properties": {
                                "city": {
                                    "type": "string"
                                }
                            },
                            "required": [
                                "city"
                            ]
                        }
                    }
                }""";
        assertThat(out).isEqualTo("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nEnvironment: ipython\n"
                + "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|>"
                + "<|start_header_id|>user<|end_header_id|>\n\nGiven the following functions, please respond with a JSON for "
                + "a function call with its proper arguments that best answers the given prompt.\n\nRespond in the format "
                + "{\"name\": function name, \"parameters\": dictionary of argument name and its value}.Do not use variables."
                + "\n\n" + toolJson + "\n\nWeather in Paris?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
    }

    @Test
    void raiseExceptionInTheTemplateIsAnInvalidRequest() {
        ChatTemplate llama3 = template("llama3.jinja", "<|begin_of_text|>", "<|eot_id|>");
        List<ChatMessage> twoCalls = List.of(ChatMessage.user("x"), ChatMessage.user("y"),
                toolCalls(null, null, call("a", "{}"), call("b", "{}")));
        assertThatThrownBy(() -> llama3.render(twoCalls, List.of(weatherTool()), true))
                .isInstanceOfSatisfying(BackendException.class, e -> {
                    assertThat(e.kind()).isEqualTo(BackendErrorKind.INVALID_REQUEST);
                    assertThat(e.param()).isEqualTo("messages");
                })
                .hasMessageContaining("This model only supports single tool-calls at once!");
    }

    @Test
    void deepseekV3JoinsSystemPromptsStripsThinkingAndWritesToolCallsWithTheOriginalArguments() {
        String bos = "<｜begin▁of▁sentence｜>";
        String out = template("deepseek-v3.jinja", bos, "<｜end▁of▁sentence｜>").render(List.of(
                ChatMessage.system("S1"), ChatMessage.system("S2"), ChatMessage.user("Hi"),
                ChatMessage.assistant("<think>hmm</think>Hello"), ChatMessage.user("Call it"),
                toolCalls(null, null, call("f", "{\"a\": 1}")), toolResult("42")), null, true);
        assertThat(out).isEqualTo(bos + "S1\n\nS2<｜User｜>Hi<｜Assistant｜>Hello<｜end▁of▁sentence｜><｜User｜>Call it"
                + "<｜Assistant｜><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{\"a\": 1}\n```"
                + "<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>"
                + "<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>42<｜tool▁output▁end｜><｜tool▁outputs▁end｜>");
        assertThat(template("deepseek-v3.jinja", bos, "").render(List.of(ChatMessage.user("Hi")), null, true))
                .isEqualTo(bos + "<｜User｜>Hi<｜Assistant｜>");
    }

    @Test
    void qwen3DropsEarlierReasoningAndHonoursEnableThinking() {
        String out = template("qwen3.jinja", "", "<|im_end|>").render(List.of(
                ChatMessage.user("Hi"), ChatMessage.assistant("<think>\nplan\n</think>\n\nHello!"), ChatMessage.user("Again")),
                null, true, Map.of("enable_thinking", false));
        assertThat(out).isEqualTo("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello!<|im_end|>\n"
                + "<|im_start|>user\nAgain<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
    }

    @Test
    void qwen3KeepsReasoningAfterTheLastQueryWithToolCalls() {
        String out = template("qwen3.jinja", "", "<|im_end|>").render(List.of(
                ChatMessage.user("Weather?"),
                toolCalls("", "need tool", call("get_weather", "{\"city\":\"Paris\"}")),
                toolResult("{\"temp\": 21}"),
                ChatMessage.assistant("It is 21.")), null, false);
        assertThat(out).isEqualTo("<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n<think>\nneed tool\n</think>"
                + "\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call><|im_end|>\n"
                + "<|im_start|>user\n<tool_response>\n{\"temp\": 21}\n</tool_response><|im_end|>\n"
                + "<|im_start|>assistant\n<think>\n\n</think>\n\nIt is 21.<|im_end|>\n");
    }

    /** Qwen3.5 writes calls in XML and groups consecutive tool results in one user turn by loop.previtem/nextitem. */
    @Test
    void qwen35GroupsToolResultsAndWritesXmlCalls() {
        String out = template("qwen3.5.jinja", "", "<|im_end|>").render(List.of(
                ChatMessage.user("Weather?"),
                toolCalls("", "need tool", call("get_weather", "{\"city\":\"Paris\",\"days\":[1,2]}"),
                        call("get_weather", "{\"city\":\"Oslo\"}")),
                toolResult("21"), toolResult("12"),
                ChatMessage.assistant("Paris 21, Oslo 12.")), null, false);
        assertThat(out).isEqualTo("<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n<think>\nneed tool\n</think>"
                + "\n\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n[1, 2]"
                + "\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n"
                + "</parameter>\n</function>\n</tool_call><|im_end|>\n"
                + "<|im_start|>user\n<tool_response>\n21\n</tool_response>\n<tool_response>\n12\n</tool_response><|im_end|>\n"
                + "<|im_start|>assistant\n<think>\n\n</think>\n\nParis 21, Oslo 12.<|im_end|>\n");
    }

    @Test
    void withoutATemplateInTheFileChatMlIsUsed() {
        var tok = dev.lazarus.kt.tokenizer.Tokenizers.fromMetadata(Map.of(
                "tokenizer.ggml.model", "gpt2", "tokenizer.ggml.pre", "qwen2",
                "tokenizer.ggml.tokens", List.of("a", "b", "<|im_end|>"), "tokenizer.ggml.merges", List.of(),
                "tokenizer.ggml.eos_token_id", 2));
        ChatTemplate chatMl = ChatTemplate.fromMetadata(Map.of(), tok);
        assertThat(chatMl.render(List.of(ChatMessage.user("hi")), null, true))
                .isEqualTo("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
    }

    @Test
    void pythonStringMethodsLoopControlsAndTests() {
        ChatTemplate t = ChatTemplate.of("{{ messages[0].content.split(',') | tojson }}|{{ 'a b  c'.split() | tojson }}|"
                + "{{ '  x  '.strip() }}|{{ 'xxhixx'.strip('x') }}|{{ 'abc'.startswith('ab') }}|{{ 'abc'.endswith(('z', 'c')) }}|"
                + "{{ 'a.b.c'.split('.', 1) | tojson }}|{{ 'Hi'.upper() }}{{ 'Hi'.lower() }}|{{ '-'.join(['a', 'b']) }}|"
                + "{% for m in messages %}{% if loop.index0 == 1 %}{% continue %}{% endif %}{% if loop.index0 == 2 %}"
                + "{% break %}{% endif %}{{ m.role }}{% endfor %}|{{ messages[0] is mapping }}{{ messages[0].content is string }}",
                "", "");
        String out = t.render(List.of(ChatMessage.user("a,,b,"), ChatMessage.assistant("x"), ChatMessage.user("y")), null, false);
        assertThat(out).isEqualTo("[\"a\", \"\", \"b\", \"\"]|[\"a\", \"b\", \"c\"]|x|hi|true|true|[\"a\", \"b.c\"]|HIhi|a-b|"
                + "user|truetrue");
    }
}
