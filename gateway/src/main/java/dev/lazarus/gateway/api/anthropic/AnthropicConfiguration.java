package dev.lazarus.gateway.api.anthropic;

import dev.lazarus.backend.api.Redactor;
import dev.lazarus.gateway.api.ErrorMapper;
import dev.lazarus.gateway.api.NativeIdentity;
import dev.lazarus.gateway.api.RequestReader;
import dev.lazarus.gateway.api.ResponseWriter;
import dev.lazarus.gateway.config.LazarusProperties;
import dev.lazarus.gateway.routing.Router;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import tools.jackson.databind.json.JsonMapper;

/** Anthropic's Messages API on the gateway's chat path: its routes, translators and error shape. */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(MessagesProperties.class)
class AnthropicConfiguration {

    @Bean
    MessagesController messagesController(RequestReader reader, JsonMapper json, Router router, ResponseWriter writer,
            ErrorMapper errors, LazarusProperties properties, MessagesProperties messages) {
        return new MessagesController(reader, new MessagesRequestTranslator(json), new MessageAnswerTranslator(json),
                router, writer, new MessagesEventWriter(json, errors, messages.pingInterval()), properties.routing().responseModel(),
                new NativeIdentity(json), new MessagesCap(messages, json));
    }

    @Bean
    AnthropicErrorHandler anthropicErrorHandler(ErrorMapper errors, JsonMapper json, Redactor redactor) {
        return new AnthropicErrorHandler(errors, json, redactor);
    }

    @Bean
    MessagesEndpointFilter messagesEndpointFilter(MessagesController controller) {
        return new MessagesEndpointFilter(controller);
    }
}
