package dev.lazarus.gateway;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/** The OpenAI-compatible gateway: {@code api} → {@code routing} → backends found through the SPI. */
@SpringBootApplication
@ConfigurationPropertiesScan
public class LazarusGatewayApplication {

    public static void main(String[] args) {
        SpringApplication.run(LazarusGatewayApplication.class, args);
    }
}
