package dev.lazarus.gateway;

import dev.lazarus.gateway.launch.UpstreamArguments;
import dev.lazarus.gateway.launch.VectorModuleLaunch;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/** The OpenAI-compatible gateway: {@code api} → {@code routing} → backends found through the SPI. */
@SpringBootApplication
@ConfigurationPropertiesScan
public class LazarusGatewayApplication {

    public static void main(String[] args) {
        VectorModuleLaunch.ensure(args); // `java -jar` without flags: relaunched with them, or one line why not
        String[] expanded;
        try {
            expanded = UpstreamArguments.expand(args); // --upstream URL --model NAME: one server, no YAML
        } catch (IllegalArgumentException e) {
            System.err.println("lazarus: " + e.getMessage());
            System.exit(2);
            return;
        }
        SpringApplication.run(LazarusGatewayApplication.class, expanded);
    }
}
