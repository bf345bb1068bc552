package dev.lazarus.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.gateway.testing.GatewayTestSupport;
import java.net.URI;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.ApplicationContext;
import org.springframework.core.Ordered;
import org.springframework.http.MediaType;
import org.springframework.web.server.WebFilter;

/** The completion endpoints answered by a web filter, as their routes answered them through the dispatcher. */
class OpenAiEndpointFilterTest extends GatewayTestSupport {

    @Autowired
    private ApplicationContext context;

    /**
     * The filter answers without going further: a filter ordered after it, or tied with it (an unordered one),
     * would never see a completion request. The web handler runs its filters in this order. Only filters that never act
     * on a completion request come after it: the Messages API's endpoint filter (its own paths), the admin API's two
     * (the admin paths and the detailed health group) and the metrics token's (the Prometheus scrape).
     */
    @Test
    void everyOtherWebFilterIsOrderedBeforeItButThoseOfOtherPaths() {
        List<WebFilter> filters = context.getBeanProvider(WebFilter.class).orderedStream().toList();
        int at = filters.indexOf(filters.stream().filter(OpenAiEndpointFilter.class::isInstance).findFirst().orElseThrow());
        assertThat(filters.subList(at + 1, filters.size())).extracting(filter -> filter.getClass().getSimpleName())
                .containsExactly("MessagesEndpointFilter", "AdminTokenFilter", "MetricsTokenFilter", "AdminContentTypeFilter");
        assertThat(filters.subList(0, at)).isNotEmpty().allSatisfy(filter -> assertThat(filter)
                .as("%s must state an order before the endpoint filter's", filter.getClass().getName())
                .isInstanceOfSatisfying(Ordered.class, ordered -> assertThat(ordered.getOrder())
                        .isLessThan(OpenAiEndpointFilter.ORDER)));
        assertThat(filters.subList(at + 1, filters.size())).allSatisfy(filter -> assertThat(((Ordered) filter).getOrder())
                .isGreaterThan(OpenAiEndpointFilter.ORDER));
    }

    /** The paths match as a route's: segments decoded, matrix parameters dropped (the API key filter sees them so). */
    @ParameterizedTest
    @ValueSource(strings = {"/v1/chat/completions", "/v1;x=1/chat/completions", "/v1/chat/%63ompletions"})
    void aChatPathSpelledAsTheRouteMatchesItIsAnswered(String rawPath) {
        String body = client.post().uri(URI.create("http://localhost:" + port + rawPath))
                .header("Authorization", "Bearer " + API_KEY)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"model\": \"test-model\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}")
                .exchange()
                .expectStatus().isOk()
                .expectBody(String.class).returnResult().getResponseBody();
        assertThat(json(body).get("object").asString()).isEqualTo("chat.completion");
    }

    @Test
    void otherPathsAndMethodsGoOnToTheDispatcher() {
        client.get().uri("/v1/chat/completions").header("Authorization", "Bearer " + API_KEY).exchange()
                .expectStatus().isEqualTo(405).expectHeader().valueEquals("Allow", "POST");
        client.post().uri("/v1/chat/completions/x").header("Authorization", "Bearer " + API_KEY)
                .contentType(MediaType.APPLICATION_JSON).bodyValue("{}").exchange()
                .expectStatus().isNotFound();
        client.get().uri("/v1/models").header("Authorization", "Bearer " + API_KEY).exchange().expectStatus().isOk();
    }
}
