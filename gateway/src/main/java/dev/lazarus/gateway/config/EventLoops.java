package dev.lazarus.gateway.config;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;

/**
 * Sets how many event loops Reactor Netty runs, for the server and the upstream clients alike (they share its global
 * loops), from {@code lazarus.server.event-loops}: by default as many as the machine has CPUs. Reactor Netty's own
 * default is at least 4, which on a 2-CPU machine cost 5-37 % more CPU per relayed request than 2 loops in every
 * round of two runs with the slots swapped (docs/benchmarks.md#event-loops). Reactor Netty reads its
 * {@code reactor.netty.ioWorkerCount} system property once, when its loops are first made, so this runs as an
 * environment post-processor: after the configuration is read, before any Netty class is loaded. A
 * {@code -Dreactor.netty.ioWorkerCount} given on the command line wins.
 */
public final class EventLoops implements EnvironmentPostProcessor, Ordered {

    static final String KEY = "lazarus.server.event-loops";
    static final String REACTOR_NETTY_PROPERTY = "reactor.netty.ioWorkerCount";

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        if (System.getProperty(REACTOR_NETTY_PROPERTY) == null) {
            System.setProperty(REACTOR_NETTY_PROPERTY, Integer.toString(count(environment)));
        }
    }

    /** The configured count, or the machine's CPUs; at least 1. */
    static int count(ConfigurableEnvironment environment) {
        Integer configured = environment.getProperty(KEY, Integer.class);
        if (configured != null && configured < 1) {
            throw new GatewayConfigException(KEY + " must be at least 1, was " + configured);
        }
        return configured != null ? configured : Math.max(1, Runtime.getRuntime().availableProcessors());
    }

    @Override
    public int getOrder() {
        // After the configuration files are read (ConfigDataEnvironmentPostProcessor).
        return Ordered.LOWEST_PRECEDENCE;
    }
}
