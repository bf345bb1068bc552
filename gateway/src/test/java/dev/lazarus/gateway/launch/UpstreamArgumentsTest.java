package dev.lazarus.gateway.launch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.gateway.LazarusGatewayApplication;
import dev.lazarus.gateway.routing.BackendRegistry;
import dev.lazarus.gateway.routing.ModelRoute;
import dev.lazarus.gateway.routing.RouteTable;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

/** {@code --upstream URL --model NAME}: one OpenAI-compatible server in front of which the gateway starts, no YAML. */
class UpstreamArgumentsTest {

    @TempDir
    Path dir;

    @Test
    void theGatewayStartsWithOneRouteToTheUpstreamInPlaceOfTheBundledModel() {
        String[] args = UpstreamArguments.expand(new String[] {"--upstream", "http://127.0.0.1:9", "--model", "qwen3",
                "--server.port=0", "--lazarus.policy.store-path=" + dir});
        try (ConfigurableApplicationContext context = SpringApplication.run(LazarusGatewayApplication.class, args)) {
            assertThat(context.getBean(RouteTable.class).routes()).extracting(ModelRoute::name).containsExactly("qwen3");
            BackendRegistry backends = context.getBean(BackendRegistry.class);
            assertThat(backends.all()).singleElement().satisfies(b -> {
                assertThat(b.id()).isEqualTo("upstream");
                assertThat(b.describe().kind()).isEqualTo("openai");
            });
        }
    }

    @Test
    void bothFormsAreReadAndOtherArgumentsPassThrough() {
        assertThat(UpstreamArguments.expand(new String[] {"--server.port=9000", "--upstream=http://h:1/", "--model=m"}))
                .containsExactly("--lazarus.backends[0].id=upstream", "--lazarus.backends[0].kind=openai",
                        "--lazarus.backends[0].settings.url=http://h:1/", "--lazarus.models[0].name=m",
                        "--lazarus.models[0].backends[0]=upstream", "--server.port=9000");
        String[] untouched = {"--server.port=9000"};
        assertThat(UpstreamArguments.expand(untouched)).isSameAs(untouched);
    }

    @Test
    void oneWithoutTheOtherIsOneLine() {
        assertThatThrownBy(() -> UpstreamArguments.expand(new String[] {"--upstream", "http://h:1"}))
                .hasMessageStartingWith("--upstream URL and --model NAME go together");
        assertThatThrownBy(() -> UpstreamArguments.expand(new String[] {"--model"})).hasMessage("--model needs a value");
    }
}
