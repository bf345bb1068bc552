package dev.lazarus.gateway.admin;

import dev.lazarus.backend.api.Redactor;
import dev.lazarus.gateway.config.LazarusProperties;
import dev.lazarus.gateway.policy.BackendHealthView;
import dev.lazarus.gateway.policy.BackendLiveStats;
import dev.lazarus.gateway.policy.ReplicaLiveStats;
import dev.lazarus.gateway.policy.Breakers;
import dev.lazarus.gateway.policy.PolicyCallDecorator;
import dev.lazarus.gateway.policy.PolicyEngine;
import dev.lazarus.gateway.policy.PolicyStore;
import dev.lazarus.gateway.policy.RouteOverrides;
import dev.lazarus.gateway.routing.BackendRegistry;
import dev.lazarus.gateway.routing.RouteTable;
import io.micrometer.core.instrument.config.MeterFilter;
import io.swagger.v3.oas.models.Components;
import java.time.Clock;
import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.info.Info;
import io.swagger.v3.oas.models.security.SecurityRequirement;
import io.swagger.v3.oas.models.security.SecurityScheme;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.concurrent.ThreadPoolTaskExecutor;
import org.springframework.web.reactive.config.BlockingExecutionConfigurer;
import org.springframework.web.reactive.config.WebFluxConfigurer;
import tools.jackson.databind.json.JsonMapper;

/** The admin API's collaborators, its token filter and its OpenAPI description. */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties({AdminProperties.class, AdminGuardProperties.class, MetricsProperties.class})
class AdminConfiguration {

    @Bean
    AdminLoginThrottle adminLoginThrottle(AdminGuardProperties guard) {
        return new AdminLoginThrottle(guard, System::nanoTime);
    }

    @Bean
    ClientAddress clientAddress(AdminGuardProperties guard) {
        return new ClientAddress(guard.trustedProxies());
    }

    @Bean
    AdminTokenFilter adminTokenFilter(AdminProperties properties, AdminGuardProperties guard,
            LazarusProperties lazarus, PolicyStore store, AdminLoginThrottle throttle, ClientAddress clients) {
        AdminTokenCheck.check(properties, guard, lazarus.security().apiKeys());
        return new AdminTokenFilter(properties, new FailedAdminLogins(store, Clock.systemUTC()), throttle, clients);
    }

    @Bean
    MetricsTokenFilter metricsTokenFilter(MetricsProperties metrics, AdminProperties admin, AdminLoginThrottle throttle,
            ClientAddress clients) {
        return new MetricsTokenFilter(metrics, admin, throttle, clients);
    }

    /** The disk-space meters are tagged with the working directory's path: a scrape must not show the file system. */
    @Bean
    MeterFilter noDiskPathMeters() {
        return MeterFilter.deny(id -> id.getName().startsWith("disk."));
    }

    @Bean
    AdminContentTypeFilter adminContentTypeFilter() {
        return new AdminContentTypeFilter();
    }

    /**
     * Admin operations write the policy store (a commit with an fsync, under the engine's lock) and
     * run the hardware probe: their controllers run on a small pool of their own, not on the event
     * loops that relay the clients' streams. Platform threads, not virtual ones: file syncs and
     * process waits hold a virtual thread's carrier, and the JVM has as few carriers as cores (two on
     * our CI machines), which stalled admin calls for a minute in a test run.
     */
    @Bean
    ThreadPoolTaskExecutor adminExecutor() {
        ThreadPoolTaskExecutor executor = new ThreadPoolTaskExecutor();
        executor.setThreadNamePrefix("lazarus-admin-");
        executor.setCorePoolSize(4);
        executor.setMaxPoolSize(4);
        executor.setQueueCapacity(256);
        executor.setDaemon(true);
        return executor;
    }

    @Bean
    WebFluxConfigurer adminControllersOffTheEventLoop(ThreadPoolTaskExecutor adminExecutor) {
        return new WebFluxConfigurer() {
            @Override
            public void configureBlockingExecution(BlockingExecutionConfigurer configurer) {
                configurer.setExecutor(adminExecutor);
                configurer.setControllerMethodPredicate(method ->
                        method.getBeanType().getPackageName().equals(AdminConfiguration.class.getPackageName()));
            }
        };
    }

    @Bean
    AdminRequests adminRequests(JsonMapper json, Redactor redactor) {
        return new AdminRequests(json, redactor);
    }

    @Bean
    BackendViews backendViews(PolicyEngine engine, BackendRegistry backends, RouteTable routes,
            RouteOverrides overrides, Breakers breakers, PolicyCallDecorator calls,
            ObjectProvider<BackendLiveStats> stats, ObjectProvider<ReplicaLiveStats> replicas,
            ObjectProvider<BackendHealthView> health, Redactor redactor) {
        // With replicas, "live" is all of them together: the figures the pivot-back rule judges.
        ReplicaLiveStats all = replicas.getIfAvailable();
        return new BackendViews(engine, backends, routes, overrides, breakers, calls,
                all != null ? all.view() : stats.getIfAvailable(BackendLiveStats::none), health.getIfAvailable(),
                redactor);
    }

    @Bean
    OpenAPI adminOpenApi() {
        return new OpenAPI()
                .info(new Info().title("Lazarus admin API").version("1")
                        .description("Operator API of the Lazarus gateway: backend roles and policy states, circuit "
                                + "breakers, the decision gate, fallback chains, the audit journal and the hardware "
                                + "probe. Every request needs 'Authorization: Bearer <lazarus.admin.token>'. Errors "
                                + "are OpenAI-format: {\"error\":{\"message\",\"type\",\"param\",\"code\"}}."))
                .components(new Components().addSecuritySchemes("adminToken",
                        new SecurityScheme().type(SecurityScheme.Type.HTTP).scheme("bearer")))
                .addSecurityItem(new SecurityRequirement().addList("adminToken"));
    }
}
