package dev.lazarus.gateway.resilience;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.gateway.routing.AttemptLoop;
import dev.lazarus.gateway.routing.BackendCallDecorator;
import dev.lazarus.gateway.routing.Endpoint;
import dev.lazarus.gateway.routing.MidStreamMode;
import dev.lazarus.gateway.routing.RouteTarget;
import dev.lazarus.gateway.routing.RoutingListener;
import dev.lazarus.gateway.testing.ScriptedBackend;
import dev.lazarus.gateway.testing.ScriptedBackendFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Issue 14, finding 2: a fallback that refuses the prefill. A stream cut after some tokens used to
 * end with the fallback's 400 as the client's error event; now a refusing backend hands on to the
 * next one that can continue, and when none can, the stream ends with the original failure. A stream
 * cut before any text starts again on a backend without prefill.
 */
class PrefillRefusalTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private final ScriptedBackend cut = backend("prefill-cut", true);
    private final ScriptedBackend refusing = backend("prefill-refusing", true);
    private final ScriptedBackend able = backend("prefill-able", true);
    private final ScriptedBackend without = backend("prefill-without", false);
    private final List<String> notResumed = new ArrayList<>();

    private static ScriptedBackend backend(String id, boolean prefill) {
        return (ScriptedBackend) new ScriptedBackendFactory().create(new BackendConfig(id, "scripted",
                Map.of("assistant-prefill", prefill)));
    }

    private AttemptLoop loop() {
        ResumingStreamResumer resumer = new ResumingStreamResumer(model -> MidStreamMode.RESUME, new RoutingListener() {
            @Override
            public void notResumed(String model, String from, BackendException reason, String why) {
                notResumed.add(why);
            }
        });
        return new AttemptLoop(BackendCallDecorator.chain(List.of(new TranscriptDecorator(model -> MidStreamMode.RESUME))),
                resumer);
    }

    private static ChatCompletionRequest request(Map<String, Object> script) {
        return ChatCompletionRequest.builder().model("m").messages(List.of(ChatMessage.user("hi")))
                .extra("script", script).build();
    }

    private static final Map<String, Object> REFUSES_PREFILL = Map.of("fail", "INVALID_REQUEST");

    private List<ChatCompletionChunk> got = new ArrayList<>();

    private Throwable run(List<ScriptedBackend> plan, Map<String, Object> script) {
        List<RouteTarget> targets = plan.stream().map(b -> new RouteTarget(b, "m")).toList();
        try {
            loop().run("m", targets, Endpoint.CHAT, request(script)).doOnNext(got::add).blockLast(WAIT);
            return null;
        } catch (Throwable e) {
            return e;
        }
    }

    private String text() {
        return got.stream().map(c -> c.contentDelta() == null ? "" : c.contentDelta()).reduce("", String::concat);
    }

    @Test
    void aBackendRefusingThePrefixHandsOnToTheNextThatCanContinue() {
        Throwable error = run(List.of(cut, refusing, able), Map.of(
                "prefill-cut", Map.of("fail", "UPSTREAM", "fail_after", 1),
                "prefill-refusing", REFUSES_PREFILL,
                "prefill-able", Map.of("tokens", List.of(", world"))));
        assertThat(error).isNull();
        assertThat(text()).isEqualTo("Hello, world");
        assertThat(able.lastChat().messages().getLast()).isEqualTo(ChatMessage.assistant("Hello"));
    }

    @Test
    void whenNoBackendCanContinueTheStreamEndsWithTheOriginalFailureNotThe400() {
        Throwable error = run(List.of(cut, refusing, without), Map.of(
                "prefill-cut", Map.of("fail", "UPSTREAM", "fail_after", 1),
                "prefill-refusing", REFUSES_PREFILL));
        assertThat(text()).isEqualTo("Hello");
        assertThat(error).isInstanceOfSatisfying(BackendException.class,
                e -> assertThat(e.kind()).isEqualTo(BackendErrorKind.UPSTREAM));
        assertThat(notResumed).singleElement().asString().contains("no remaining backend could continue");
        assertThat(without.calls()).as("cannot continue a prefix: never asked").isZero();
    }

    @Test
    void aStreamCutBeforeAnyTextStartsAgainOnABackendWithoutPrefill() {
        Throwable error = run(List.of(cut, without), Map.of(
                "prefill-cut", Map.of("fail", "UPSTREAM", "fail_after", 1, "tokens", List.of("")),
                "prefill-without", Map.of("tokens", List.of("Fresh", " start"))));
        assertThat(error).isNull();
        assertThat(text()).isEqualTo("Fresh start");
        assertThat(without.lastChat().messages()).containsExactly(ChatMessage.user("hi"));
        assertThat(got).filteredOn(c -> !c.choices().isEmpty() && c.choices().getFirst().delta() != null
                && "assistant".equals(c.choices().getFirst().delta().role())).hasSize(1);
    }
}
