package dev.lazarus.gateway.routing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.gateway.testing.ScriptedBackendFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/** Route filters act on the plan in their {@link RouteLayer}s' order, whatever order they are given in. */
class RouteFilterOrderTest {

    private final ModelRoute route = new ModelRoute("m", List.of(new RouteTarget(
            new ScriptedBackendFactory().create(new BackendConfig("rf-one", "scripted", Map.of())), "m")),
            "test", Duration.ofSeconds(10));

    /** Leaves every backend out, recording that it ran, and gives {@code reason} for it. */
    private static RouteFilter leavingAllOut(RouteLayer layer, List<RouteLayer> ran) {
        return new RouteFilter() {
            @Override
            public List<RouteTarget> filter(ModelRoute route, Endpoint<?, ?> endpoint, List<RouteTarget> planned) {
                ran.add(layer);
                return List.of();
            }

            @Override
            public BackendException leftOut(RouteTarget target) {
                return BackendException.unavailable("left out by " + layer);
            }

            @Override
            public RouteLayer layer() {
                return layer;
            }
        };
    }

    @Test
    void filtersRunAndAreAskedWhyInTheirLayersOrder() {
        List<RouteLayer> ran = new ArrayList<>();
        // Given last layer first: the layers, not the list, decide.
        List<RouteFilter> filters = List.of(leavingAllOut(RouteLayer.POLICY_REASONS, ran), leavingAllOut(RouteLayer.AVAILABILITY, ran));
        assertThat(RouteFilter.inOrder(filters)).extracting(RouteFilter::layer).containsExactly(RouteLayer.values());
        Router router = new Router(new RouteTable(List.of(route)), RoutePlanner.configuredOrder().filteredBy(filters),
                new AttemptLoop(BackendCallDecorator.chain(List.of()), StreamResumer.none()), filters);
        ChatCompletionRequest request = ChatCompletionRequest.builder().model("m").messages(List.of(ChatMessage.user("hi")))
                .stream(true).build();
        StepVerifier.create(router.chat(request))
                .expectErrorSatisfies(e -> assertThat(((AllBackendsFailedException) e).failures()).singleElement()
                        .satisfies(f -> assertThat(f.cause()).hasMessage("left out by AVAILABILITY")))
                .verify(Duration.ofSeconds(10));
        assertThat(ran).containsExactly(RouteLayer.values());
    }
}
