package dev.lazarus.gateway.admin;

import static org.springframework.web.reactive.function.server.RequestPredicates.GET;
import static org.springframework.web.reactive.function.server.RequestPredicates.accept;

import java.net.URI;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.io.ClassPathResource;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * The operator console: a static page in the jar ({@code static/console/}) that reads and drives the admin API with
 * the token the operator enters in it. The page itself holds nothing secret; every figure and action goes through
 * {@code /admin/**} and its token. {@code /} sends browsers there; other clients still get a 404 for it.
 */
@Configuration(proxyBeanMethods = false)
class ConsoleConfiguration {

    private static final URI CONSOLE = URI.create("/console/");

    @Bean
    RouterFunction<ServerResponse> consoleRoutes() {
        ClassPathResource page = new ClassPathResource("static/console/index.html");
        return RouterFunctions.route(GET("/").and(accept(MediaType.TEXT_HTML)).and(request -> request.headers()
                        .accept().stream().anyMatch(MediaType.TEXT_HTML::equalsTypeAndSubtype)),
                        request -> ServerResponse.temporaryRedirect(CONSOLE).build())
                .andRoute(GET("/console"), request -> ServerResponse.temporaryRedirect(CONSOLE).build())
                .andRoute(GET("/console/"), request -> ServerResponse.ok().contentType(MediaType.TEXT_HTML)
                        .header("Cache-Control", "no-cache").bodyValue(page));
    }
}
