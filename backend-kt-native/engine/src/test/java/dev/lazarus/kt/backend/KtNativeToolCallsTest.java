package dev.lazarus.kt.backend;

import static dev.lazarus.kt.backend.EmbeddedModel.finishReason;
import static dev.lazarus.kt.backend.EmbeddedModel.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.openai.ChatCompletion;
import dev.lazarus.backend.api.openai.ChatCompletionAggregator;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.backend.api.openai.Tool;
import dev.lazarus.backend.api.openai.ToolCall;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Tool calls end to end: the tools rendered by the model's template, the engine generating, and
 * the answer (forced by a {@link ScriptedSampler}: the embedded model's weights are random) parsed
 * into OpenAI tool calls in the stream.
 */
class KtNativeToolCallsTest {

    static final List<ChatMessage> ASK = List.of(ChatMessage.user("Weather in Paris?"));
    static final Tool WEATHER = new Tool("function", new Tool.Function("get_weather", "Current weather",
            Map.of("type", "object", "properties", Map.of("city", Map.of("type", "string"))), null));
    static final String CALL = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";

    static volatile String answer;
    static KtNativeBackend backend;

    @BeforeAll
    static void start() throws Exception {
        // the tools section is long in this byte-level vocabulary
        backend = EmbeddedModel.start(Map.of("context-size", 1024), (params, vocab, context) -> new ScriptedSampler(answer));
    }

    @AfterAll
    static void stop() {
        backend.close();
    }

    static ChatCompletionRequest.Builder withTools(String scripted) {
        answer = scripted;
        return ChatCompletionRequest.builder().model(EmbeddedModel.NAME).messages(ASK).tools(List.of(WEATHER))
                .maxTokens(200);
    }

    static List<ChatCompletionChunk> run(ChatCompletionRequest request) {
        return backend.chat(request).collectList().block(Duration.ofMinutes(1));
    }

    static ChatCompletion aggregate(List<ChatCompletionChunk> chunks) {
        ChatCompletionAggregator aggregator = new ChatCompletionAggregator();
        chunks.forEach(aggregator::add);
        return aggregator.result();
    }

    @Test
    void backendSaysItSupportsTools() {
        assertThat(backend.describe().capabilities().tools()).isTrue();
    }

    @Test
    void aCallBecomesAToolCallWithFinishReasonToolCalls() {
        ChatCompletion completion = aggregate(run(withTools(CALL).build()));
        ChatCompletion.Choice choice = completion.choices().getFirst();
        assertThat(choice.finishReason()).isEqualTo("tool_calls");
        assertThat(choice.message().content()).as("no text besides the call").isNull();
        assertThat(choice.message().toolCalls()).singleElement().satisfies(call -> {
            assertThat(call.id()).matches("call_[0-9a-f]{24}");
            assertThat(call.type()).isEqualTo("function");
            assertThat(call.function().name()).isEqualTo("get_weather");
            assertThat(call.function().arguments()).isEqualTo("{\"city\": \"Paris\"}");
        });
    }

    @Test
    void theStreamSendsTextThenTheCallsHeaderThenItsArguments() {
        List<ChatCompletionChunk> chunks = run(withTools("Let me look.\n" + CALL + "\n" + CALL.replace("Paris", "Oslo"))
                .build());
        assertThat(text(chunks)).as("text before a call is kept as written, as llama-server keeps it").isEqualTo("Let me look.\n");
        List<ToolCall> deltas = chunks.stream().filter(c -> !c.choices().isEmpty())
                .map(c -> c.choices().getFirst().delta().toolCalls()).filter(Objects::nonNull)
                .map(List::getFirst).toList();
        assertThat(deltas).hasSize(4);
        assertThat(deltas.get(0).index()).isZero();
        assertThat(deltas.get(0).id()).startsWith("call_");
        assertThat(deltas.get(0).type()).isEqualTo("function");
        assertThat(deltas.get(0).function()).isEqualTo(new ToolCall.FunctionCall("get_weather", ""));
        assertThat(deltas.get(1)).isEqualTo(new ToolCall(0, null, null,
                new ToolCall.FunctionCall(null, "{\"city\": \"Paris\"}")));
        assertThat(deltas.get(2).index()).isEqualTo(1);
        assertThat(deltas.get(2).id()).isNotEqualTo(deltas.get(0).id());
        assertThat(deltas.get(3).function().arguments()).isEqualTo("{\"city\": \"Oslo\"}");
        assertThat(finishReason(chunks)).isEqualTo("tool_calls");
        assertThat(chunks.getLast().usage().completionTokens())
                .isEqualTo(EmbeddedModel.TOKENIZER.encode(answer, false, false).length + 1);
    }

    @Test
    void malformedCallJsonIsSentAsText() {
        String broken = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": }\n</tool_call>";
        List<ChatCompletionChunk> chunks = run(withTools(broken).build());
        assertThat(text(chunks)).isEqualTo(broken);
        assertThat(finishReason(chunks)).isEqualTo("stop");
        assertThat(aggregate(chunks).choices().getFirst().message().toolCalls()).isNull();
    }

    @Test
    void aCallCutByMaxTokensIsTextAndFinishReasonLength() {
        List<ChatCompletionChunk> chunks = run(withTools(CALL).maxTokens(8).build());
        assertThat(finishReason(chunks)).isEqualTo("length");
        assertThat(aggregate(chunks).choices().getFirst().message().toolCalls()).isNull();
        assertThat(text(chunks)).startsWith("<tool");
    }

    @Test
    void toolChoiceNoneNeitherRendersNorParses() {
        List<ChatCompletionChunk> chunks = run(withTools(CALL).toolChoice("none").build());
        assertThat(chunks.getLast().usage().promptTokens()).isEqualTo(EmbeddedModel.promptTokens(ASK));
        assertThat(text(chunks)).isEqualTo(CALL);
        assertThat(finishReason(chunks)).isEqualTo("stop");
        List<ChatCompletionChunk> auto = run(withTools(CALL).toolChoice("auto").build());
        assertThat(auto.getLast().usage().promptTokens()).isGreaterThan(EmbeddedModel.promptTokens(ASK) + 10);
        assertThat(finishReason(auto)).isEqualTo("tool_calls");
    }

    @Test
    void withoutToolsTheSameTextIsPlainContent() {
        answer = CALL;
        List<ChatCompletionChunk> chunks = run(ChatCompletionRequest.builder().model(EmbeddedModel.NAME).messages(ASK)
                .maxTokens(200).build());
        assertThat(text(chunks)).isEqualTo(CALL);
        assertThat(finishReason(chunks)).isEqualTo("stop");
    }

    @Test
    void parallelToolCallsFalseKeepsOnlyTheFirstCall() {
        List<ChatCompletionChunk> chunks = run(withTools(CALL + "\n" + CALL).parallelToolCalls(false).build());
        assertThat(aggregate(chunks).choices().getFirst().message().toolCalls()).hasSize(1);
        assertThat(text(chunks)).isEqualTo(CALL);
    }

    @Test
    void unknownToolChoicesAreRefusedAsInvalidRequests() {
        for (Object choice : List.of("sometimes", Map.of("type", "function", "function", Map.of("name", "no_such_tool")))) {
            assertThatThrownBy(() -> backend.chat(withTools(CALL).toolChoice(choice).build()).blockLast())
                    .isInstanceOfSatisfying(BackendException.class, e -> {
                        assertThat(e.kind()).isEqualTo(BackendErrorKind.INVALID_REQUEST);
                        assertThat(e.param()).isEqualTo("tool_choice");
                    });
        }
    }

    @Test
    void aToolThatIsNoFunctionIsRefused() {
        Tool other = new Tool("retrieval", new Tool.Function("x", null, null, null));
        assertThatThrownBy(() -> backend.chat(withTools(CALL).tools(List.of(other)).build()).blockLast())
                .isInstanceOfSatisfying(BackendException.class, e -> assertThat(e.param()).isEqualTo("tools[0].type"));
    }

    @Test
    void badChatTemplateKwargsOrReasoningFormatAreInvalidRequests() {
        Map<String, Object> notAnObject = Map.of("chat_template_kwargs", "enable_thinking");
        Map<String, Object> unknownFormat = Map.of("reasoning_format", "deepseek-legacy");
        for (Map<String, Object> extra : List.of(notAnObject, unknownFormat)) {
            ChatCompletionRequest request = withTools(CALL).build();
            request.extra().putAll(extra);
            assertThatThrownBy(() -> backend.chat(request).blockLast())
                    .isInstanceOfSatisfying(BackendException.class, e -> {
                        assertThat(e.kind()).isEqualTo(BackendErrorKind.INVALID_REQUEST);
                        assertThat(e.param()).isEqualTo(extra.keySet().iterator().next());
                    });
        }
    }
}
