package dev.lazarus.gateway.config;

import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendFactories;
import dev.lazarus.backend.api.Redactor;
import dev.lazarus.gateway.api.ConnectionProperties;
import dev.lazarus.gateway.routing.AttemptLoop;
import dev.lazarus.gateway.routing.BackendCallDecorator;
import dev.lazarus.gateway.routing.BackendRegistry;
import dev.lazarus.gateway.routing.ModelRoute;
import dev.lazarus.gateway.routing.RouteFilter;
import dev.lazarus.gateway.routing.RoutePlanner;
import dev.lazarus.gateway.routing.RouteTable;
import dev.lazarus.gateway.routing.RouteTarget;
import dev.lazarus.gateway.routing.Router;
import dev.lazarus.gateway.routing.RoutingListener;
import dev.lazarus.gateway.routing.StreamResumer;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/**
 * Wires configuration to routing: backends from the SPI, the route table, and the attempt loop
 * with whatever {@link BackendCallDecorator}s, {@link RoutePlanner} and {@link StreamResumer} the
 * application declares (the policy module plugs in here by declaring beans).
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(LazarusProperties.class)
@Import(RedactorConfiguration.class) // every backend gets the one redactor: wherever this configuration goes, it goes too
public class GatewayConfiguration {

    /**
     * Every backend gets the gateway's redactor: it knows all configured secrets, not only the backend's own. An HTTP
     * backend's connection pool ({@code max-connections}) is as large as the gateway's own cap on client connections
     * unless set: every request under way holds one client connection, so the pool never holds one back.
     */
    @Bean(destroyMethod = "close")
    BackendRegistry backendRegistry(LazarusProperties properties, Redactor redactor,
            ObjectProvider<ConnectionProperties> connections) {
        RouteConfigValidator.validate(properties);
        BackendFactories factories = BackendFactories.load(GatewayConfiguration.class.getClassLoader());
        ConnectionProperties limits = connections.getIfAvailable();
        int pool = limits == null ? 0 : limits.max() > 0 ? limits.max() : UNCAPPED_POOL;
        List<BackendConfig> configs = properties.backends().stream()
                .map(b -> new BackendConfig(b.id(), b.kind(), withPool(b.settings(), pool), redactor))
                .toList();
        return BackendRegistry.create(configs, factories::create);
    }

    /** The pool of a gateway without a cap on client connections ({@code lazarus.connections.max: 0}). */
    static final int UNCAPPED_POOL = 65_536;

    static Map<String, Object> withPool(Map<String, Object> settings, int pool) {
        if (pool <= 0 || settings.containsKey(POOL_KEY)) {
            return settings;
        }
        Map<String, Object> with = new LinkedHashMap<>(settings);
        with.put(POOL_KEY, pool);
        return with;
    }

    /** The HTTP backend kinds' pool size key; other kinds do not read it. */
    static final String POOL_KEY = "max-connections";

    @Bean
    RouteTable routeTable(LazarusProperties properties, BackendRegistry backends) {
        Map<String, String> backendModels = new HashMap<>();
        properties.backends().forEach(b -> {
            if (b.model() != null && !b.model().isBlank()) {
                backendModels.put(b.id(), b.model());
            }
        });
        List<ModelRoute> routes = properties.models().stream()
                .map(model -> new ModelRoute(
                        model.name(),
                        model.backends().stream()
                                .map(id -> new RouteTarget(backends.find(id).orElseThrow(),
                                        backendModels.getOrDefault(id, model.name())))
                                .toList(),
                        model.ownedBy(),
                        model.overallTimeout() != null ? model.overallTimeout() : properties.routing().overallTimeout(),
                        model.midStream(),
                        model.defaultMaxTokens()))
                .toList();
        return new RouteTable(routes);
    }

    /**
     * The route planner bean when one is declared (the rollback policy's), else the configured
     * order; then every {@link RouteFilter} bean at its {@link dev.lazarus.gateway.routing.RouteLayer layer}; every {@link BackendCallDecorator} bean at its
     * {@link dev.lazarus.gateway.routing.CallLayer layer}. Providers rather than
     * {@code @ConditionalOnMissingBean} defaults, which would depend on the order in which
     * configuration classes are read.
     */
    @Bean
    Router router(RouteTable routes, ObjectProvider<RoutePlanner> planner, ObjectProvider<RouteFilter> filters,
            ObjectProvider<StreamResumer> resumer, ObjectProvider<BackendCallDecorator> decorators,
            ObjectProvider<RoutingListener> listeners, Redactor redactor) {
        List<RouteFilter> ordered = RouteFilter.inOrder(filters.stream().toList());
        RoutePlanner planned = planner.getIfUnique(RoutePlanner::configuredOrder).filteredBy(ordered);
        List<RoutingListener> all = listeners.orderedStream().toList();
        AttemptLoop loop = new AttemptLoop(BackendCallDecorator.chain(decorators.stream().toList()),
                resumer.getIfUnique(StreamResumer::none),
                all.isEmpty() ? RoutingListener.NONE : RoutingListener.composite(all), redactor);
        return new Router(routes, planned, loop, ordered);
    }
}
