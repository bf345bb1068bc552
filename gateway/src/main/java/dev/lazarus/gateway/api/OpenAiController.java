package dev.lazarus.gateway.api;

import dev.lazarus.backend.api.openai.ChatCompletion;
import dev.lazarus.backend.api.openai.ChatCompletionAggregator;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatEvents;
import dev.lazarus.backend.api.openai.Completion;
import dev.lazarus.backend.api.openai.CompletionAggregator;
import dev.lazarus.backend.api.openai.CompletionRequest;
import dev.lazarus.gateway.config.LazarusProperties;
import dev.lazarus.gateway.config.LazarusProperties.ResponseModel;
import dev.lazarus.gateway.routing.Answer;
import dev.lazarus.gateway.routing.Router;
import dev.lazarus.gateway.routing.ServedBy;
import java.util.function.Supplier;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * {@code POST /v1/chat/completions} and {@code POST /v1/completions}: read and validate the
 * request, hand it to the {@link Router}, and relay the backend stream as an event stream or as
 * one aggregated JSON answer, in the form the router chose ({@link Answer}), naming the backends that
 * answered in {@value #SERVED_BY_HEADER}. A whole answer is passed on as it came, with the response's
 * identity written over the server's. Routed by {@link OpenAiEndpointFilter}.
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
            return switch (router.chatAnswer(request)) {
                case Answer.Whole<ChatEvents, ChatCompletionChunk> whole ->
                        writer.whole(exchange.getResponse(), whole.answer().contextWrite(served::into), identity, header);
                case Answer.Streamed<ChatEvents, ChatCompletionChunk> stream ->
                        writer.chatEvents(exchange.getRequest(), exchange.getResponse(),
                                stream.pieces().contextWrite(served::into), identity, request.wantsUsageInStream(), header);
                case Answer.Aggregated<ChatEvents, ChatCompletionChunk> chunks -> writer.json(exchange.getResponse(),
                        ChunkShape.CHAT.shape(chunks.chunks().contextWrite(served::into), identity, true)
                                .reduceWith(ChatCompletionAggregator::new, ChatCompletionAggregator::add)
                                .map(aggregator -> {
                                    ChatCompletion r = aggregator.result();
                                    ResponseIdentity id = identity.get();
                                    return new ChatCompletion(id.id(), ChatCompletion.OBJECT, id.created(),
                                            id.model(), r.systemFingerprint(), r.choices(), r.usage(), r.extra());
                                }), header);
            };
        });
    }

    public Mono<Void> completions(ServerWebExchange exchange) {
        return reader.read(exchange.getRequest(), CompletionRequest.class).flatMap(request -> {
            validator.validate(request);
            ServedBy served = new ServedBy();
            Runnable header = servedByHeader(exchange.getResponse(), served);
            Supplier<ResponseIdentity> identity = identity(ResponseIdentity.completion(request.model()), served);
            return switch (router.completionAnswer(request)) {
                case Answer.Whole<Completion, Completion> whole ->
                        writer.whole(exchange.getResponse(), whole.answer().contextWrite(served::into), identity, header);
                case Answer.Streamed<Completion, Completion> stream -> writer.eventStream(exchange.getRequest(),
                        exchange.getResponse(), ChunkShape.COMPLETION.shape(stream.pieces().contextWrite(served::into),
                                identity, request.wantsUsageInStream()), header);
                case Answer.Aggregated<Completion, Completion> chunks -> writer.json(exchange.getResponse(),
                        ChunkShape.COMPLETION.shape(chunks.chunks().contextWrite(served::into), identity, true)
                                .reduceWith(CompletionAggregator::new, CompletionAggregator::add)
                                .map(aggregator -> {
                                    Completion r = aggregator.result();
                                    ResponseIdentity id = identity.get();
                                    return new Completion(id.id(), Completion.OBJECT, id.created(), id.model(),
                                            r.systemFingerprint(), r.choices(), r.usage(), r.extra());
                                }), header);
            };
        });
    }

    /**
     * Who answered, written into the header by the writer just before the body's first bytes (a JSON answer: after
     * all of it; a stream: with its first event) or its error. Not a {@code beforeCommit} action: Spring runs a
     * response's commit actions as a concatenation of publishers (3.3 % of a relayed whole answer's JFR samples, the
     * action itself 1.7 %: docs/benchmarks.md).
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
