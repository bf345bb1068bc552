package dev.lazarus.gateway.api;

import dev.lazarus.backend.api.openai.ChatCompletion;
import dev.lazarus.backend.api.openai.ChatCompletionAggregator;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.Completion;
import dev.lazarus.backend.api.openai.CompletionAggregator;
import dev.lazarus.backend.api.openai.CompletionRequest;
import dev.lazarus.gateway.routing.Router;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * {@code POST /v1/chat/completions} and {@code POST /v1/completions}: read and validate the
 * request, hand it to the {@link Router}, and relay the backend stream as an event stream or as
 * one aggregated JSON answer.
 */
@RestController
public class OpenAiController {

    private final RequestReader reader;
    private final RequestValidator validator;
    private final Router router;
    private final ResponseWriter writer;

    public OpenAiController(RequestReader reader, RequestValidator validator, Router router, ResponseWriter writer) {
        this.reader = reader;
        this.validator = validator;
        this.router = router;
        this.writer = writer;
    }

    @PostMapping("/v1/chat/completions")
    public Mono<Void> chatCompletions(ServerWebExchange exchange) {
        return reader.read(exchange.getRequest(), ChatCompletionRequest.class).flatMap(request -> {
            validator.validate(request);
            ResponseIdentity identity = ResponseIdentity.chat(request.model());
            Flux<ChatCompletionChunk> backend = router.chat(request);
            if (request.isStream()) {
                return writer.eventStream(exchange.getRequest(), exchange.getResponse(),
                        ChunkShape.CHAT.shape(backend, identity, request.wantsUsageInStream()));
            }
            Mono<ChatCompletion> answer = ChunkShape.CHAT.shape(backend, identity, true)
                    .reduceWith(ChatCompletionAggregator::new, ChatCompletionAggregator::add)
                    .map(aggregator -> {
                        ChatCompletion r = aggregator.result();
                        return new ChatCompletion(identity.id(), ChatCompletion.OBJECT, identity.created(),
                                identity.model(), r.systemFingerprint(), r.choices(), r.usage(), r.extra());
                    });
            return writer.json(exchange.getResponse(), answer);
        });
    }

    @PostMapping("/v1/completions")
    public Mono<Void> completions(ServerWebExchange exchange) {
        return reader.read(exchange.getRequest(), CompletionRequest.class).flatMap(request -> {
            validator.validate(request);
            ResponseIdentity identity = ResponseIdentity.completion(request.model());
            Flux<Completion> backend = router.completion(request);
            if (request.isStream()) {
                return writer.eventStream(exchange.getRequest(), exchange.getResponse(),
                        ChunkShape.COMPLETION.shape(backend, identity, request.wantsUsageInStream()));
            }
            Mono<Completion> answer = ChunkShape.COMPLETION.shape(backend, identity, true)
                    .reduceWith(CompletionAggregator::new, CompletionAggregator::add)
                    .map(aggregator -> {
                        Completion r = aggregator.result();
                        return new Completion(identity.id(), Completion.OBJECT, identity.created(), identity.model(),
                                r.systemFingerprint(), r.choices(), r.usage(), r.extra());
                    });
            return writer.json(exchange.getResponse(), answer);
        });
    }
}
