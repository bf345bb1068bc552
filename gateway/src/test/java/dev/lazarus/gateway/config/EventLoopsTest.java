package dev.lazarus.gateway.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.mock.env.MockEnvironment;

class EventLoopsTest {

    private String before;

    @BeforeEach
    void saveProperty() {
        before = System.getProperty(EventLoops.REACTOR_NETTY_PROPERTY);
        System.clearProperty(EventLoops.REACTOR_NETTY_PROPERTY);
    }

    @AfterEach
    void restoreProperty() {
        if (before == null) {
            System.clearProperty(EventLoops.REACTOR_NETTY_PROPERTY);
        } else {
            System.setProperty(EventLoops.REACTOR_NETTY_PROPERTY, before);
        }
    }

    @Test
    void asManyLoopsAsTheMachineHasCpusByDefault() {
        new EventLoops().postProcessEnvironment(new MockEnvironment(), new SpringApplication());

        assertThat(System.getProperty(EventLoops.REACTOR_NETTY_PROPERTY))
                .isEqualTo(Integer.toString(Runtime.getRuntime().availableProcessors()));
    }

    @Test
    void theConfiguredCount() {
        new EventLoops().postProcessEnvironment(new MockEnvironment().withProperty(EventLoops.KEY, "3"),
                new SpringApplication());

        assertThat(System.getProperty(EventLoops.REACTOR_NETTY_PROPERTY)).isEqualTo("3");
    }

    @Test
    void reactorNettysOwnPropertyWins() {
        System.setProperty(EventLoops.REACTOR_NETTY_PROPERTY, "5");

        new EventLoops().postProcessEnvironment(new MockEnvironment().withProperty(EventLoops.KEY, "3"),
                new SpringApplication());

        assertThat(System.getProperty(EventLoops.REACTOR_NETTY_PROPERTY)).isEqualTo("5");
    }

    @Test
    void fewerThanOneIsAConfigurationError() {
        assertThatThrownBy(() -> EventLoops.count(new MockEnvironment().withProperty(EventLoops.KEY, "0")))
                .isInstanceOf(GatewayConfigException.class).hasMessageContaining(EventLoops.KEY);
    }
}
