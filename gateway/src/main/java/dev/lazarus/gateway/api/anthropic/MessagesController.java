package dev.lazarus.gateway.api.anthropic;

import dev.lazarus.backend.api.openai.ChatCompletionAggregator;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.Usage;
import dev.lazarus.gateway.api.NativeIdentity;
import dev.lazarus.gateway.api.OpenAiController;
import dev.lazarus.gateway.api.RequestReader;
import dev.lazarus.gateway.api.ResponseWriter;
import dev.lazarus.gateway.config.LazarusProperties.ResponseModel;
import dev.lazarus.gateway.routing.ApiEndpoint;
import dev.lazarus.gateway.routing.ProtocolPiece;
import dev.lazarus.gateway.routing.Router;
import dev.lazarus.gateway.routing.ServedBy;
import java.util.Map;
import java.util.function.Supplier;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * {@code POST /v1/messages} and {@code POST /v1/messages/count_tokens}: the Anthropic request is translated into a
 * chat request and routed as one ({@link Router#protocol}: the same routes, breakers, retries, fallback before the
 * first byte and resume mid-stream), and the chat answer translated back: a Messages event stream, or one
 * {@code message}; a backend that serves Messages natively gets the request itself, and its answer passes through
 * with the gateway's {@code id} and {@code model}. Token counts come from the backend that would serve the request, as the prompt size it reports
 * for it, so the rendered chat template and the model's own tokenizer are counted.
 */
public final class MessagesController {

    static final String MESSAGES_PATH = "/v1/messages";
    static final String COUNT_TOKENS_PATH = "/v1/messages/count_tokens";

    private final RequestReader reader;
    private final MessagesRequestTranslator requests;
    private final MessageAnswerTranslator answers;
    private final Router router;
    private final ResponseWriter writer;
    private final MessagesEventWriter events;
    private final ResponseModel responseModel;
    private final NativeIdentity identity;
    private final MessagesCap cap;

    public MessagesController(RequestReader reader, MessagesRequestTranslator requests, MessageAnswerTranslator answers,
            Router router, ResponseWriter writer, MessagesEventWriter events, ResponseModel responseModel,
            NativeIdentity identity, MessagesCap cap) {
        this.identity = identity;
        this.cap = cap;
        this.reader = reader;
        this.requests = requests;
        this.answers = answers;
        this.router = router;
        this.writer = writer;
        this.events = events;
        this.responseModel = responseModel;
    }

    @SuppressWarnings("unchecked")
    public Mono<Void> messages(ServerWebExchange exchange) {
        return reader.read(exchange.getRequest(), Map.class).flatMap(read -> {
            Map<String, Object> asked = (Map<String, Object>) read;
            ChatCompletionRequest request = requests.toChat(asked);
            boolean capped = cap.lowers(request);
            Map<String, Object> body = capped ? cap.lower(asked) : asked;
            ChatCompletionRequest chat = capped ? cap.lower(request) : request;
            ServedBy served = new ServedBy();
            Runnable header = servedByHeader(exchange.getResponse(), served);
            String id = MessageAnswerTranslator.messageId();
            Supplier<String> model = model(chat.model(), served);
            boolean stream = MessagesRequestTranslator.streams(body);
            Flux<ProtocolPiece> pieces = router.protocol(ApiEndpoint.MESSAGES, body, chat, stream)
                    .contextWrite(served::into);
            if (stream) {
                return events.write(exchange.getResponse(), pieces,
                        () -> new MessagesStreamTranslator(id, model.get(), capped),
                        event -> switch (event.name()) {
                            case "message_start" -> identity.event(event, "message", id, model.get());
                            case "message_delta" -> cap.stopReason(event, capped);
                            default -> event;
                        },
                        header, exchange.getRequest());
            }
            Mono<Map<String, Object>> message = pieces.collectList().map(answer -> {
                if (answer.size() == 1 && answer.getFirst() instanceof ProtocolPiece.Whole whole) {
                    Map<String, Object> own = identity.answer(whole.answer(), id, model.get());
                    MessageAnswerTranslator.stopSequenceReason(own);
                    return capped ? cap.endTurn(own) : own;
                }
                ChatCompletionAggregator aggregator = new ChatCompletionAggregator();
                String stopSequence = null;
                for (ProtocolPiece piece : answer) {
                    ChatCompletionChunk chunk = ((ProtocolPiece.Chunk) piece).chunk();
                    aggregator.add(chunk);
                    String word = MessageAnswerTranslator.stoppingWord(chunk);
                    stopSequence = word != null ? word : stopSequence;
                }
                return answers.toMessage(id, model.get(), aggregator.result(), capped, stopSequence);
            });
            return writer.json(exchange.getResponse(), message, header);
        });
    }

    /**
     * The prompt's size in the serving backend's tokens: the request asked for one token, whose usage counts the
     * prompt as the backend rendered and tokenized it.
     */
    @SuppressWarnings("unchecked")
    public Mono<Void> countTokens(ServerWebExchange exchange) {
        return reader.read(exchange.getRequest(), Map.class).flatMap(read -> {
            ChatCompletionRequest chat = requests.toChat((Map<String, Object>) read, false).toBuilder()
                    .maxTokens(1).build();
            ServedBy served = new ServedBy();
            Mono<Map<String, Object>> count = router.chat(chat, ApiEndpoint.MESSAGES_COUNT_TOKENS)
                    .contextWrite(served::into)
                    .filter(chunk -> chunk.usage() != null)
                    .map(ChatCompletionChunk::usage)
                    .last(Usage.of(0, 0))
                    .map(usage -> Map.of("input_tokens", usage.promptTokens()));
            return writer.json(exchange.getResponse(), count, servedByHeader(exchange.getResponse(), served));
        });
    }

    private static Runnable servedByHeader(ServerHttpResponse response, ServedBy served) {
        return () -> {
            if (!served.isEmpty()) {
                response.getHeaders().set(OpenAiController.SERVED_BY_HEADER, served.ids());
            }
        };
    }

    private Supplier<String> model(String requested, ServedBy served) {
        return responseModel == ResponseModel.REQUESTED ? () -> requested : () -> served.currentModel(requested);
    }
}
