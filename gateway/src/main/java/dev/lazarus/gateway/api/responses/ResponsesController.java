package dev.lazarus.gateway.api.responses;

import dev.lazarus.backend.api.ProtocolEvent;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.gateway.api.ApiError;
import dev.lazarus.gateway.api.Awaited;
import dev.lazarus.gateway.api.ErrorMapper;
import dev.lazarus.gateway.api.NamedEventWriter;
import dev.lazarus.gateway.api.NamedEventWriter.NamedEvent;
import dev.lazarus.gateway.api.OpenAiController;
import dev.lazarus.gateway.api.RequestReader;
import dev.lazarus.gateway.api.RequestValidator;
import dev.lazarus.gateway.api.ResponseWriter;
import dev.lazarus.gateway.config.LazarusProperties;
import dev.lazarus.gateway.config.LazarusProperties.ResponseModel;
import dev.lazarus.gateway.routing.ApiEndpoint;
import dev.lazarus.gateway.routing.ProtocolPiece;
import dev.lazarus.gateway.routing.Router;
import dev.lazarus.gateway.routing.ServedBy;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.ThreadExecutorMap;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.springframework.http.HttpStatus;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The Responses API: {@code POST /v1/responses} served through the chat-completions path (the same routing,
 * keys, breakers, retries, failover and mid-stream resume), translated both ways, or passed through to a backend
 * that serves it natively ({@link Router#protocol}), and the stored responses'
 * {@code GET}, {@code DELETE} and {@code input_items}.
 */
@RestController
public class ResponsesController {

    static final String PATH = "/v1/responses";
    private static final TypeReference<Map<String, Object>> JSON_OBJECT = new TypeReference<>() {};

    private final RequestReader reader;
    private final RequestValidator validator;
    private final Router router;
    private final ResponseWriter writer;
    private final NamedEventWriter events;
    private final ErrorMapper errors;
    private final ResponseStore store;
    private final ResponsesRequestTranslator translator;
    private final ResponseObjects objects;
    private final JsonMapper json;
    private final int maxOutputTokens;
    private final Duration keepAliveInterval;
    private final ResponseModel responseModel;

    public ResponsesController(RequestReader reader, RequestValidator validator, Router router, ResponseWriter writer,
            ErrorMapper errors, ResponseStore store, ResponsesProperties properties, LazarusProperties lazarus,
            JsonMapper json) {
        this.responseModel = lazarus.routing().responseModel();
        this.reader = reader;
        this.validator = validator;
        this.router = router;
        this.writer = writer;
        this.events = new NamedEventWriter(json);
        this.errors = errors;
        this.store = store;
        this.translator = new ResponsesRequestTranslator(json);
        this.objects = new ResponseObjects(json);
        this.json = json;
        this.maxOutputTokens = properties.maxOutputTokens();
        this.keepAliveInterval = properties.keepAliveInterval();
    }

    @PostMapping(PATH)
    public Mono<Void> create(ServerWebExchange exchange) {
        return reader.read(exchange.getRequest(), ObjectNode.class).flatMap(request -> {
            if (ResponsesRequestTranslator.string(request, "previous_response_id") == null && !references(request)) {
                return create(exchange, request, List.of());
            }
            // Back on the connection's event loop after the store: an answer streamed from there is read by an
            // upstream client of that loop, which the writer's backpressure holds (from another thread it read ahead
            // of a stalled client by megabytes).
            EventExecutor loop = ThreadExecutorMap.currentExecutor();
            Mono<List<JsonNode>> prior = offLoop(() -> {
                List<JsonNode> conversation = prior(request);
                resolveReferences(request, conversation);
                return conversation;
            });
            return (loop == null ? prior : prior.publishOn(Schedulers.fromExecutor(loop)))
                    .flatMap(conversation -> create(exchange, request, conversation));
        });
    }

    private Mono<Void> create(ServerWebExchange exchange, ObjectNode request, List<JsonNode> prior) {
        // What a backend that serves Responses natively gets: the client's request as it came (before the items get
        // ids), with the gateway's cap on output; none for a continuation of a stored response, which only the
        // gateway holds.
        Map<String, Object> body = prior.isEmpty() ? json.convertValue(request, JSON_OBJECT) : null;
        List<ObjectNode> input = translator.inputItems(request);
        ChatCompletionRequest chat = translator.toChat(request, input, prior);
        withIds(input); // after the translation has checked the items
        if (chat.maxTokens() == null && maxOutputTokens > 0) {
            chat = chat.toBuilder().maxTokens(maxOutputTokens).build();
            if (body != null) {
                body.put("max_output_tokens", maxOutputTokens);
            }
        }
        validator.validate(chat);
        boolean stored = !(request.get("store") instanceof JsonNode s && s.isBoolean() && !s.booleanValue());
        ObjectNode start = objects.start(request, ResponseIds.response(), Instant.now().getEpochSecond(),
                chat.model());
        ResponseStreamTranslator stream = new ResponseStreamTranslator(json, objects, start);
        ServedBy served = new ServedBy();
        ServerHttpResponse response = exchange.getResponse();
        Runnable header = () -> {
            if (!served.isEmpty()) {
                response.getHeaders().set(OpenAiController.SERVED_BY_HEADER, served.ids());
            }
        };
        boolean streamed = request.get("stream") instanceof JsonNode s && s.isBoolean() && s.booleanValue();
        boolean[] answered = {false};
        String requested = chat.model();
        Flux<ProtocolPiece> pieces = router.protocol(ApiEndpoint.RESPONSES, body, chat, streamed)
                .doOnNext(piece -> {
                    // The response names the model that answered (response-model: served), known with its first piece.
                    if (!answered[0] && responseModel == ResponseModel.SERVED) {
                        answered[0] = true;
                        start.put("model", served.currentModel(requested));
                    }
                })
                .contextWrite(served::into);
        // Stored before the client hears of the end, so that its next request can continue it.
        Function<ObjectNode, Mono<Void>> keep = finished -> stored ? offLoop(() -> {
            store.put(new StoredResponse(finished, prior, input));
            return true;
        }).then() : Mono.empty();
        if (streamed) {
            NativeResponseEvents passed = new NativeResponseEvents(start);
            // One group a piece: the events a chunk (or a native server's read) became go out in one buffer. One
            // piece asked for at a time (prefetch 1): the writer asks no faster than the client drains. While the
            // backend reads the prompt, the response opens after an interval and a comment keeps it alive.
            Flux<List<? extends NamedEvent>> answer = Awaited.ticking(pieces, keepAliveInterval).concatMap(awaited -> {
                        if (!(awaited instanceof Awaited.Piece<ProtocolPiece>(ProtocolPiece piece))) {
                            return Mono.just(stream.started() || passed.started()
                                    ? List.of(NamedEventWriter.KEEP_ALIVE) : named(stream.open()));
                        }
                        return switch (piece) {
                            case ProtocolPiece.Chunk(ChatCompletionChunk chunk) -> {
                                passed.resumeInto(stream); // a native stream cut mid-answer goes on as chat
                                yield Mono.just(named(stream.onChunk(chunk)));
                            }
                            case ProtocolPiece.Events relayed -> {
                                List<NamedEventWriter.Event> out = passed.read(relayed.events(), stream.started());
                                ObjectNode finished = passed.takeFinished();
                                yield finished != null ? keep.apply(finished).thenReturn(out) : Mono.just(out);
                            }
                            case ProtocolPiece.Whole whole -> Mono.<List<NamedEventWriter.Event>>error(
                                    new IllegalStateException("a whole answer in a stream"));
                        };
                    }, 1)
                    .concatWith(Mono.defer(() -> {
                        if (passed.started() && !passed.resumed()) {
                            return Mono.empty(); // the server's own last event has gone
                        }
                        List<ObjectNode> end = stream.complete();
                        return keep.apply(stream.response()).thenReturn(named(end));
                    }))
                    .onErrorResume(error -> {
                        if (!stream.started() && !passed.started()) {
                            return Flux.error(error);
                        }
                        ApiError failure = errors.map(error, exchange.getRequest());
                        String code = failure.detail().code() != null ? failure.detail().code() : "server_error";
                        if (passed.started() && !passed.resumed()) {
                            return Mono.just(List.of(passed.error(code, failure.detail().message())));
                        }
                        return Mono.just(named(stream.fail(code, failure.detail().message())));
                    });
            return events.writeGroups(response, answer, header);
        }
        Mono<ObjectNode> whole = pieces.collectList().flatMap(answer -> {
            ObjectNode finished;
            if (answer.size() == 1 && answer.getFirst() instanceof ProtocolPiece.Whole(Map<String, Object> own)) {
                finished = json.valueToTree(own);
                finished.put("id", start.get("id").stringValue());
                finished.set("model", start.get("model"));
            } else {
                answer.forEach(piece -> stream.onChunk(((ProtocolPiece.Chunk) piece).chunk()));
                stream.complete();
                finished = stream.response();
            }
            return keep.apply(finished).thenReturn(finished);
        });
        return writer.json(response, whole, header);
    }

    private static List<NamedEventWriter.Event> named(List<ObjectNode> events) {
        List<NamedEventWriter.Event> named = new ArrayList<>(events.size());
        for (ObjectNode event : events) {
            named.add(new NamedEventWriter.Event(event.get("type").stringValue(), event));
        }
        return named;
    }

    /**
     * The events of a backend that serves Responses natively, passed on with the gateway's response id and model in
     * the {@code response} of each {@code response.*} lifecycle event; the finished response kept for the store.
     * Where the gateway opened the response while the server read the prompt, the server's own opening events are
     * left out (its {@code sequence_number}s go on from them as the gateway's did).
     */
    private final class NativeResponseEvents {
        private final ObjectNode start;
        private boolean started;
        private boolean openedBefore;
        private boolean resumed;
        private int count;
        private ObjectNode finished;
        /** The output item events passed on: what a resume goes on from. */
        private final List<ProtocolEvent> items = new ArrayList<>();

        NativeResponseEvents(ObjectNode start) {
            this.start = start;
        }

        /** @param opened whether the response had been opened before the server's first events */
        List<NamedEventWriter.Event> read(List<ProtocolEvent> events, boolean opened) {
            if (!started) {
                started = true;
                openedBefore = opened;
            }
            count += events.size();
            List<NamedEventWriter.Event> out = new ArrayList<>(events.size());
            for (ProtocolEvent event : events) {
                String name = event.name();
                if (openedBefore && (name.equals("response.created") || name.equals("response.in_progress"))) {
                    continue;
                }
                if (!name.startsWith("response.") || name.indexOf('.') != name.lastIndexOf('.')) {
                    if (name.startsWith("response.output_item.") || name.equals("response.output_text.delta")) {
                        items.add(event);
                    }
                    out.add(new NamedEventWriter.Event(name, event.data()));
                    continue;
                }
                ObjectNode data = (ObjectNode) json.readTree(event.data());
                if (data.get("response") instanceof ObjectNode own) {
                    own.put("id", start.get("id").stringValue());
                    own.set("model", start.get("model"));
                    if (name.equals("response.completed") || name.equals("response.incomplete")
                            || name.equals("response.failed")) {
                        finished = own;
                    }
                }
                out.add(new NamedEventWriter.Event(name, data));
            }
            return out;
        }

        boolean started() {
            return started;
        }

        /** Whether the stream, cut after these events, went on as chat. */
        boolean resumed() {
            return resumed;
        }

        /** Before the first chunk of a resumed stream: the translator goes on from these events. */
        void resumeInto(ResponseStreamTranslator stream) {
            if (started && !resumed) {
                resumed = true;
                stream.resumeAfter(items.stream().map(event -> (ObjectNode) json.readTree(event.data())).toList(), count);
            }
        }

        /** The response its last event carried, once, when it came. */
        ObjectNode takeFinished() {
            ObjectNode taken = finished;
            finished = null;
            return taken;
        }

        /** The stream's end after a failure mid-answer: OpenAI's {@code error} event. */
        NamedEventWriter.Event error(String code, String message) {
            ObjectNode data = json.createObjectNode();
            data.put("type", "error");
            data.put("code", code);
            data.put("message", message);
            data.putNull("param");
            return new NamedEventWriter.Event("error", data);
        }
    }

    @GetMapping(PATH + "/{id}")
    public Mono<ObjectNode> get(@PathVariable String id) {
        return offLoop(() -> find(id).response());
    }

    @DeleteMapping(PATH + "/{id}")
    public Mono<ObjectNode> delete(@PathVariable String id) {
        return offLoop(() -> {
            if (!store.delete(id)) {
                throw notFound(id);
            }
            ObjectNode deleted = json.createObjectNode();
            deleted.put("id", id);
            deleted.put("object", "response.deleted");
            deleted.put("deleted", true);
            return deleted;
        });
    }

    @GetMapping(PATH + "/{id}/input_items")
    public Mono<ObjectNode> inputItems(@PathVariable String id, @RequestParam(defaultValue = "desc") String order,
            @RequestParam(defaultValue = "20") int limit, @RequestParam(required = false) String after) {
        return offLoop(() -> {
            if (!order.equals("asc") && !order.equals("desc")) {
                throw ApiError.invalidValue("Invalid value for 'order': '" + order
                        + "'. Supported values are: 'asc' and 'desc'.", "order");
            }
            if (limit < 1 || limit > 100) {
                throw ApiError.invalidValue("Invalid 'limit': expected a value between 1 and 100, but got " + limit
                        + " instead.", "limit");
            }
            List<ObjectNode> items = new ArrayList<>(find(id).input());
            if (order.equals("desc")) {
                items = items.reversed();
            }
            int from = 0;
            if (after != null) {
                for (int i = 0; i < items.size(); i++) {
                    if (after.equals(items.get(i).get("id").asString())) {
                        from = i + 1;
                    }
                }
            }
            List<ObjectNode> page = items.subList(Math.min(from, items.size()), Math.min(from + limit, items.size()));
            ObjectNode list = json.createObjectNode();
            list.put("object", "list");
            list.putArray("data").addAll(page.stream().map(JsonNode.class::cast).toList());
            list.put("first_id", page.isEmpty() ? null : page.getFirst().get("id").asString());
            list.put("last_id", page.isEmpty() ? null : page.getLast().get("id").asString());
            list.put("has_more", from + limit < items.size());
            return list;
        });
    }

    /** A store call, off the event loop: the database's blocks. */
    private static <T> Mono<T> offLoop(java.util.concurrent.Callable<T> call) {
        return Mono.fromCallable(call).subscribeOn(Schedulers.boundedElastic());
    }

    /** The conversation {@code previous_response_id} names, or none. */
    private List<JsonNode> prior(ObjectNode request) {
        String previous = ResponsesRequestTranslator.string(request, "previous_response_id");
        if (previous == null) {
            return List.of();
        }
        return store.get(previous).orElseThrow(() -> new ApiError(HttpStatus.NOT_FOUND, "invalid_request_error",
                "previous_response_not_found", "previous_response_id",
                "Previous response with id '" + previous + "' not found.")).conversation();
    }

    /** Whether the request's input names stored items ({@code item_reference}). */
    private static boolean references(ObjectNode request) {
        if (request.get("input") instanceof ArrayNode input) {
            for (JsonNode item : input) {
                if (isReference(item)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Whether the item is an {@code item_reference} (an item of another type, or none, is the translator's to check). */
    private static boolean isReference(JsonNode item) {
        return item instanceof ObjectNode object && object.get("type") instanceof JsonNode type && type.isString()
                && type.stringValue().equals("item_reference");
    }

    /**
     * Each {@code item_reference} of the input replaced by the item it names: one of the conversation
     * {@code previous_response_id} continues, else one of any kept response's input or output; an id none holds is a
     * 404, as OpenAI answers it.
     */
    private void resolveReferences(ObjectNode request, List<JsonNode> conversation) {
        if (!(request.get("input") instanceof ArrayNode input)) {
            return;
        }
        for (int i = 0; i < input.size(); i++) {
            if (!isReference(input.get(i))) {
                continue;
            }
            String param = "input[" + i + "].id";
            JsonNode named = input.get(i).get("id");
            if (named != null && !named.isNull() && !named.isString()) {
                throw ApiError.invalidType(param, "expected a string");
            }
            String id = named == null || named.isNull() ? "" : named.stringValue();
            if (id.isEmpty()) {
                throw ApiError.invalidRequest("Missing required parameter: '" + param + "'.", param);
            }
            JsonNode referenced = conversation.stream().filter(c -> StoredResponse.hasId(c, id)).findFirst()
                    .<JsonNode>map(JsonNode::deepCopy)
                    .or(() -> store.item(id).map(ObjectNode::deepCopy))
                    .orElseThrow(() -> new ApiError(HttpStatus.NOT_FOUND, "invalid_request_error", "not_found", param,
                            "Item with id '" + id + "' not found."));
            input.set(i, referenced);
        }
    }

    private StoredResponse find(String id) {
        return store.get(id).orElseThrow(() -> notFound(id));
    }

    private static ApiError notFound(String id) {
        return new ApiError(HttpStatus.NOT_FOUND, "invalid_request_error", "not_found", null,
                "Response with id '" + id + "' not found.");
    }

    /** Input items as they are listed later: each with an id (a message without one gets a {@code msg_} id). */
    private static List<ObjectNode> withIds(List<ObjectNode> items) {
        for (ObjectNode item : items) {
            if (!item.has("id")) {
                String type = item.has("type") ? item.get("type").stringValue() : "message";
                item.put("id", switch (type) {
                    case "function_call" -> ResponseIds.functionCall();
                    case "reasoning" -> ResponseIds.reasoning();
                    default -> ResponseIds.message();
                });
            }
            if (!item.has("type")) {
                item.put("type", "message");
            }
        }
        return items;
    }
}
