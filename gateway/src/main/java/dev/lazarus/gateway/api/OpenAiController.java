package dev.lazarus.gateway.api;

import dev.lazarus.backend.api.openai.ChatCompletion;
import dev.lazarus.backend.api.openai.ChatCompletionAggregator;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.Completion;
import dev.lazarus.backend.api.openai.CompletionAggregator;
import dev.lazarus.backend.api.openai.CompletionRequest;
import dev.lazarus.gateway.config.LazarusProperties;
import dev.lazarus.gateway.config.LazarusProperties.ResponseModel;
import dev.lazarus.gateway.routing.Router;
import dev.lazarus.gateway.routing.ServedBy;
import java.util.function.Supplier;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * {@code POST /v1/chat/completions} and {@code POST /v1/completions}: read and validate the
 * request, hand it to the {@link Router}, and relay the backend stream as an event stream or as
 * one aggregated JSON answer, naming the backends that answered in {@value #SERVED_BY_HEADER}. A
 * non-streaming request whose backends all answer whole stays non-streaming upstream, and their
 * answer is passed on as it came, with the response's identity written over the server's. Routed by
 * {@link OpenAiEndpointFilter}.
 */
@Component
public class OpenAiController {

    static final String CHAT_PATH = "/v1/chat/completions";
    static final String COMPLETIONS_PATH = "/v1/completions";

    /** The backends that answered, in order; a stream's names the one that started it (headers go first). */
    public static final String SERVED_BY_HEADER = "X-Lazarus-Backend";

    private final RequestReader reader;
    private final RequestValidator validator;
    private final Router router;
    private final ResponseWriter writer;
    private final ResponseModel responseModel;

    public OpenAiController(RequestReader reader, RequestValidator validator, Router router, ResponseWriter writer,
            LazarusProperties properties) {
        this.reader = reader;
        this.validator = validator;
        this.router = router;
        this.writer = writer;
        this.responseModel = properties.routing().responseModel();
    }

    public Mono<Void> chatCompletions(ServerWebExchange exchange) {
        return reader.read(exchange.getRequest(), ChatCompletionRequest.class).flatMap(request -> {
            validator.validate(request);
            ServedBy served = new ServedBy();
            Runnable header = servedByHeader(exchange.getResponse(), served);
            Supplier<ResponseIdentity> identity = identity(ResponseIdentity.chat(request.model()), served);
            if (!request.isStream() && router.answersWhole(request.model())) {
                return writer.whole(exchange.getResponse(), router.chatWhole(request)
                        .contextWrite(c -> c.put(ServedBy.class, served)).single(), identity, header);
            }
            if (request.isStream()) {
                return writer.chatEvents(exchange.getRequest(), exchange.getResponse(),
                        router.chatEvents(request).contextWrite(c -> c.put(ServedBy.class, served)), identity,
                        request.wantsUsageInStream(), header);
            }
            Flux<ChatCompletionChunk> backend = router.chat(request).contextWrite(c -> c.put(ServedBy.class, served));
            Mono<ChatCompletion> answer = ChunkShape.CHAT.shape(backend, identity, true)
                    .reduceWith(ChatCompletionAggregator::new, ChatCompletionAggregator::add)
                    .map(aggregator -> {
                        ChatCompletion r = aggregator.result();
                        ResponseIdentity id = identity.get();
                        return new ChatCompletion(id.id(), ChatCompletion.OBJECT, id.created(),
                                id.model(), r.systemFingerprint(), r.choices(), r.usage(), r.extra());
                    });
            return writer.json(exchange.getResponse(), answer, header);
        });
    }

    public Mono<Void> completions(ServerWebExchange exchange) {
        return reader.read(exchange.getRequest(), CompletionRequest.class).flatMap(request -> {
            validator.validate(request);
            ServedBy served = new ServedBy();
            Runnable header = servedByHeader(exchange.getResponse(), served);
            Supplier<ResponseIdentity> identity = identity(ResponseIdentity.completion(request.model()), served);
            if (!request.isStream() && router.answersWhole(request.model())) {
                return writer.whole(exchange.getResponse(), router.completionWhole(request)
                        .contextWrite(c -> c.put(ServedBy.class, served)).single(), identity, header);
            }
            Flux<Completion> backend = router.completion(request).contextWrite(c -> c.put(ServedBy.class, served));
            if (request.isStream()) {
                return writer.eventStream(exchange.getRequest(), exchange.getResponse(),
                        ChunkShape.COMPLETION.shape(backend, identity, request.wantsUsageInStream()), header);
            }
            Mono<Completion> answer = ChunkShape.COMPLETION.shape(backend, identity, true)
                    .reduceWith(CompletionAggregator::new, CompletionAggregator::add)
                    .map(aggregator -> {
                        Completion r = aggregator.result();
                        ResponseIdentity id = identity.get();
                        return new Completion(id.id(), Completion.OBJECT, id.created(), id.model(),
                                r.systemFingerprint(), r.choices(), r.usage(), r.extra());
                    });
            return writer.json(exchange.getResponse(), answer, header);
        });
    }

    /**
     * Who answered, written into the header by the writer just before the body's first bytes (a JSON answer: after
     * all of it; a stream: with its first event) or its error. Not a {@code beforeCommit} action: Spring runs a
     * response's commit actions as a concatenation of publishers (3.3 % of a relayed whole answer's JFR samples, the
     * action itself 1.7 %: docs/benchmarks.md#relay-profile).
     */
    private static Runnable servedByHeader(ServerHttpResponse response, ServedBy served) {
        return () -> {
            if (!served.isEmpty()) {
                response.getHeaders().set(SERVED_BY_HEADER, served.ids());
            }
        };
    }

    private Supplier<ResponseIdentity> identity(ResponseIdentity requested, ServedBy served) {
        return responseModel == ResponseModel.REQUESTED ? () -> requested
                : () -> requested.withModel(served.currentModel(requested.model()));
    }
}
