package dev.lazarus.llamacpp.http;

import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.CallContext;
import dev.lazarus.backend.api.PrefillProgress;
import dev.lazarus.backend.api.ProtocolEvent;
import dev.lazarus.backend.api.WholeAnswer;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatEvent;
import dev.lazarus.backend.api.openai.ChatEvents;
import dev.lazarus.backend.api.openai.CompletionRequest;
import dev.lazarus.backend.api.openai.RawRequest;
import dev.lazarus.llamacpp.wire.ChatChunkReader;
import dev.lazarus.llamacpp.wire.ChatEventScanner;
import dev.lazarus.llamacpp.wire.PromptProgress;
import dev.lazarus.llamacpp.wire.SseDecoder;
import dev.lazarus.llamacpp.wire.UpstreamErrors;
import dev.lazarus.llamacpp.wire.WholeAnswerReader;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.ThreadExecutorMap;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import reactor.util.context.ContextView;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectReader;
import tools.jackson.databind.json.JsonMapper;

/**
 * HTTP to one llama-server: streamed completions as typed chunks, and small GETs for health and
 * facts. Non-blocking end to end on a pooled Reactor Netty client; every failure leaves as a
 * {@link BackendException}.
 */
public final class LlamaServerClient implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(LlamaServerClient.class);

    /** A small, fully read answer. */
    public record Answer(int status, String body) {
        public boolean ok() {
            return status == 200;
        }
    }

    private final ClientSettings settings;
    private final JsonMapper json;
    private final UpstreamErrors errors;
    private final String backendId;
    private final ConnectionProvider streamPool;
    private final ConnectionProvider probePool;
    private final HttpClient streams;
    private final HttpClient closingStreams;
    private final HttpClient freshStreams;
    private final HttpClient wholes;
    private final HttpClient freshWholes;
    private final HttpClient probes;
    private final HttpClient freshProbes;
    /** Completion clients of the event loops that called, each with its own pool on that loop. */
    private final Map<EventLoop, LoopClient> loopClients = new ConcurrentHashMap<>();
    private final StreamTimeouts timeouts;
    private final SlotProgress slots;
    private final StreamReuse reuse;
    private final UpstreamAddress address;
    private final ChatChunkReader chatChunks;
    private final WholeAnswerReader wholeAnswers;
    private volatile boolean closed;

    /** An event loop's clients, on one pool: for streams kept or closed, and for whole answers (always kept alive). */
    private record LoopClient(HttpClient kept, HttpClient closing, HttpClient whole, ConnectionProvider pool) {}

    public LlamaServerClient(String backendId, ClientSettings settings, JsonMapper json, UpstreamErrors errors) {
        this.settings = settings;
        this.address = UpstreamAddress.of(settings.baseUrl());
        this.json = json;
        this.errors = errors;
        this.backendId = backendId;
        this.reuse = new StreamReuse(settings.reuseStreamConnections(), settings.serverName(), settings.poolMaxIdleTime());
        this.streamPool = streamPool(settings.kind() + "-" + backendId);
        // Health checks get connections of their own: a server busy with long generations is not down.
        this.probePool = ConnectionProvider.builder(settings.kind() + "-probe-" + backendId)
                .maxConnections(2)
                .pendingAcquireTimeout(settings.healthTimeout())
                .maxIdleTime(settings.poolMaxIdleTime())
                .build();
        this.streams = streamClient(HttpClient.create(streamPool), true);
        this.closingStreams = streamClient(HttpClient.create(streamPool), false);
        this.probes = configure(HttpClient.create(probePool));
        // For the one retry of a request whose pooled connection was already closed upstream.
        this.freshStreams = streamClient(HttpClient.newConnection(), false);
        this.freshProbes = configure(HttpClient.newConnection());
        this.wholes = configure(HttpClient.create(streamPool));
        this.freshWholes = configure(HttpClient.newConnection());
        this.chatChunks = new ChatChunkReader(json);
        this.wholeAnswers = new WholeAnswerReader(json, errors);
        this.timeouts = new StreamTimeouts(settings.firstTokenTimeout(), settings.idleTimeout(), Schedulers.parallel(),
                settings.serverName());
        this.slots = new SlotProgress(this::get, json, settings.firstTokenTimeout(), Schedulers.parallel());
    }

    private ConnectionProvider streamPool(String name) {
        return ConnectionProvider.builder(name)
                .maxConnections(settings.maxConnections())
                // Waiting for a connection is part of the time to first token, whose own timer fires first.
                .pendingAcquireTimeout(settings.firstTokenTimeout().plusSeconds(1))
                // llama-server (cpp-httplib) drops idle keep-alive connections after 5 s; leave first.
                .maxIdleTime(settings.poolMaxIdleTime())
                .build();
    }

    /**
     * A completion client that keeps its connections, or one that says Connection: close up front, so that the
     * pool never hands a connection the server is ending to the next request ({@link StreamReuse}). Its answer's
     * body comes in the pieces the connection read ({@link ReadCoalescer}).
     */
    private HttpClient streamClient(HttpClient client, boolean keep) {
        HttpClient streaming = configure(client).keepAlive(keep)
                .doOnResponse((response, connection) -> ReadCoalescer.install(connection));
        return keep ? streaming.doAfterResponseSuccess(reuse::answerEnded) : streaming;
    }

    /** The completion client for the calling thread: its event loop's own, or the shared one off event loops. */
    private HttpClient streamClient() {
        boolean keep = reuse.reuse();
        LoopClient loop = loopClient();
        return loop == null ? (keep ? streams : closingStreams) : keep ? loop.kept() : loop.closing();
    }

    /** The client for whole answers on the calling thread: its event loop's own, or the shared one. */
    private HttpClient wholeClient() {
        LoopClient loop = loopClient();
        return loop == null ? wholes : loop.whole();
    }

    private LoopClient loopClient() {
        EventExecutor current = ThreadExecutorMap.currentExecutor();
        if (!(current instanceof EventLoop loop) || closed) {
            return null;
        }
        LoopClient known = loopClients.get(loop);
        if (known == null) {
            known = loopClients.computeIfAbsent(loop, l -> {
                ConnectionProvider pool = streamPool(settings.kind() + "-" + backendId + "-" + loopClients.size());
                return new LoopClient(streamClient(HttpClient.create(pool), true).runOn(l),
                        streamClient(HttpClient.create(pool), false).runOn(l), configure(HttpClient.create(pool)).runOn(l), pool);
            });
            if (closed) {
                known.pool().dispose();
            }
        }
        return known;
    }

    private HttpClient configure(HttpClient client) {
        String apiKey = settings.apiKey();
        return address.aim(client)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, settings.connectTimeout().toMillis()))
                .headers(h -> {
                    if (apiKey != null) {
                        h.set(HttpHeaderNames.AUTHORIZATION, "Bearer " + apiKey);
                    }
                });
    }

    /**
     * POSTs {@code body} to a streaming endpoint and reads the event stream as chunks of
     * {@code type}. The stream completes at {@code data: [DONE]}; it fails with TIMEOUT when no
     * chunk comes within the first-token timeout or the gap between two exceeds the idle timeout,
     * with the mapped upstream error for an HTTP error or an {@code error} object in the stream, and
     * with UPSTREAM for a cut or malformed stream.
     *
     * @param isFinal  a chunk after which a missing {@code [DONE]} is forgiven (the usage chunk)
     * @param extraOf  the chunk's unknown fields, where an in-stream {@code error} lands
     */
    public <T> Flux<T> stream(String path, Object body, Class<T> type, Predicate<T> isFinal,
                       Function<T, Map<String, Object>> extraOf) {
        return stream(path, body, type, isFinal, extraOf, false);
    }

    /**
     * @param trimTimings llama-server sends {@code timings} with every token only because the backend
     *                    asked: chat chunks keep them on the first token and the usage chunk only
     *                    ({@link ChatChunkReader#read(byte[], int, int, ChatChunkReader.TimingsTrim)})
     */
    public <T> Flux<T> stream(String path, Object body, Class<T> type, Predicate<T> isFinal,
                       Function<T, Map<String, Object>> extraOf, boolean trimTimings) {
        return stream(path, body, type, isFinal, extraOf, trimTimings, false);
    }

    /**
     * @param progress whether the request asked for llama-server's prompt-progress events ({@link PromptProgress}):
     *                 they are taken out of the stream and told to the caller's {@link PrefillProgress}, and
     *                 each starts the first-token timeout again
     */
    public <T> Flux<T> stream(String path, Object body, Class<T> type, Predicate<T> isFinal,
                       Function<T, Map<String, Object>> extraOf, boolean trimTimings, boolean progress) {
        Flux<List<SseDecoder.Event>> reads = reads(path, body);
        return Flux.deferContextual(context -> {
            ChunkParser<T> parser = parserFor(type, trimTimings);
            StreamEnd end = new StreamEnd();
            // One read asked for at a time: the default 256 reads ahead let a stalled client's stream pull
            // megabytes of its upstream into memory (a read is up to tens of KB of events).
            return timed(reads, progress, context)
                    .<SseDecoder.Event>concatMapIterable(events -> events, 1)
                    .<T>handle((event, sink) -> {
                        // Events after [DONE] are dropped rather than cancelled: reading the body to its end
                        // lets the connection go back to the pool.
                        if (!end.beforeDone(event)) {
                            return;
                        }
                        T chunk = toChunk(event, parser, extraOf);
                        end.sawFinal |= isFinal.test(chunk);
                        sink.next(chunk);
                    })
                    .concatWith(Mono.defer(() -> end.complete() ? Mono.<T>empty() : Mono.error(new BackendException(
                            BackendErrorKind.UPSTREAM, settings.serverName() + "'s stream ended before [DONE]"))));
        }).onErrorMap(errors::fromThrowable);
    }

    /**
     * A chat answer streamed from {@code path} as its events in the pieces they came in (one read of the
     * connection each), scanned rather than read into chunks ({@link ChatEventScanner}); an event of
     * another shape is read into a typed chunk, and an error event or an {@code error} object in a chunk
     * fails the stream. Limits, errors and the end of the stream as {@link #stream}.
     *
     * @param trimTimings as in {@link #stream(String, Object, Class, Predicate, Function, boolean)}
     * @param progress    as in {@link #stream(String, Object, Class, Predicate, Function, boolean, boolean)}
     */
    public Flux<ChatEvents> chatEvents(String path, Object body, boolean trimTimings, boolean progress) {
        Flux<List<SseDecoder.Event>> reads = reads(path, body);
        return Flux.deferContextual(context -> {
            ChatChunkReader.TimingsTrim trim = trimTimings ? new ChatChunkReader.TimingsTrim() : null;
            ChatEventScanner scanner = new ChatEventScanner(json, trim);
            ChunkParser<ChatCompletionChunk> parser = (bytes, offset, length) -> chatChunks.read(bytes, offset, length, trim);
            StreamEnd end = new StreamEnd();
            return timed(reads, progress, context)
                    .<ChatEvents>handle((events, sink) -> {
                        List<ChatEvent> piece = new ArrayList<>(events.size());
                        for (SseDecoder.Event event : events) {
                            if (!end.beforeDone(event)) {
                                break;
                            }
                            ChatEvent scanned = event.isError() ? null
                                    : scanner.scan(event.bytes(), event.offset(), event.length());
                            if (scanned == null) {
                                scanned = ChatEvent.typed(toChunk(event, parser, chunk -> orEmpty(chunk.extra())));
                            }
                            end.sawFinal |= scanned.usage() != null;
                            piece.add(scanned);
                        }
                        if (!piece.isEmpty()) {
                            sink.next(new ChatEvents(piece));
                        }
                    })
                    .concatWith(Mono.defer(() -> end.complete() ? Mono.<ChatEvents>empty() : Mono.error(new BackendException(
                            BackendErrorKind.UPSTREAM, settings.serverName() + "'s stream ended before [DONE]"))));
        }).onErrorMap(errors::fromThrowable);
    }

    /**
     * A stream of another protocol's events (Messages, Responses) from {@code path}, each as its name and data, in
     * the pieces they came in; an error event fails the stream. Ends where the server's body ends (or at a
     * {@code [DONE]}); whether that was the protocol's end is the caller's to judge. Limits and errors as {@link #stream}.
     *
     * @param progress where the stream's progress reading the prompt comes from
     */
    public Flux<List<ProtocolEvent>> events(String path, Object body, ProgressSource progress) {
        Flux<List<SseDecoder.Event>> reads = reads(path, body);
        return Flux.deferContextual(context -> {
            StreamEnd end = new StreamEnd();
            Flux<List<SseDecoder.Event>> watched = progress != ProgressSource.SLOTS ? timed(reads, progress == ProgressSource.EVENTS, context)
                    : timeouts.apply(slots.watch(reads, CallContext.prefillProgress(context).orElse(null)), List::isEmpty);
            return watched.<List<ProtocolEvent>>handle((events, sink) -> {
                List<ProtocolEvent> piece = new ArrayList<>(events.size());
                for (SseDecoder.Event event : events) {
                    if (!end.beforeDone(event)) {
                        break;
                    }
                    if (event.isError()) {
                        throw errors.fromStreamError(json.readTree(event.bytes(), event.offset(), event.length()));
                    }
                    piece.add(new ProtocolEvent(event.name(),
                            Arrays.copyOfRange(event.bytes(), event.offset(), event.offset() + event.length())));
                }
                if (!piece.isEmpty()) {
                    sink.next(piece);
                }
            });
        }).onErrorMap(errors::fromThrowable);
    }

    /** A non-streaming request to {@code path} whose answer is one JSON object, read whole as {@link #whole} reads. */
    public Mono<JsonNode> whole(String path, Object body) {
        return Mono.defer(() -> {
            byte[] payload = payload(body);
            ReusedConnectionRetry.Attempt attempt = new ReusedConnectionRetry.Attempt();
            return postWhole(wholeClient(), path, payload, attempt)
                    .onErrorResume(attempt::worthAFreshConnection,
                            e -> postWhole(freshWholes, path, payload, new ReusedConnectionRetry.Attempt()));
        }).map(answer -> {
            JsonNode node = answer.streamed() ? null : json.readTree(answer.body());
            if (node == null || !node.isObject()) {
                throw errors.malformedAnswer(settings.serverName() + " answered " + path + " with no JSON object");
            }
            return node;
        }).onErrorMap(errors::fromThrowable);
    }

    private static Map<String, Object> orEmpty(Map<String, Object> extra) {
        return extra == null ? Map.of() : extra;
    }

    /**
     * The reads within the stream's time limits; where the request asked for progress events, without them (a read
     * of progress alone left empty, which starts the first-token limit again rather than ending it).
     */
    private Flux<List<SseDecoder.Event>> timed(Flux<List<SseDecoder.Event>> reads, boolean progress, ContextView context) {
        if (!progress) {
            return timeouts.apply(reads);
        }
        PromptProgress filter = new PromptProgress(json, CallContext.prefillProgress(context).orElse(null));
        Flux<List<SseDecoder.Event>> filtered = reads.map(filter::filter)
                .concatWith(Mono.fromSupplier(filter::rest).filter(rest -> !rest.isEmpty()));
        return timeouts.apply(filtered, List::isEmpty);
    }

    /** The POST of {@code body}, once more on a new connection where a reused one was already closed. */
    private Flux<List<SseDecoder.Event>> reads(String path, Object body) {
        return Flux.defer(() -> {
            byte[] payload = payload(body);
            ReusedConnectionRetry.Attempt attempt = new ReusedConnectionRetry.Attempt();
            return post(streamClient(), path, payload, attempt)
                    .onErrorResume(attempt::worthAFreshConnection, e -> {
                        reuse.foundClosed();
                        log.debug("POST {} failed on a reused connection before any answer ({}); once more on a new one",
                                path, e.toString());
                        return post(freshStreams, path, payload, new ReusedConnectionRetry.Attempt());
                    });
        });
    }

    /** One POST of {@code payload}, its answer read as server-sent events: those of each read together. */
    private Flux<List<SseDecoder.Event>> post(HttpClient client, String path, byte[] payload, ReusedConnectionRetry.Attempt attempt) {
        SseDecoder decoder = new SseDecoder();
        return client.post()
                .uri(address.path(path))
                .send((req, out) -> {
                    req.header(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                            .header(HttpHeaderNames.ACCEPT, "text/event-stream")
                            .header(HttpHeaderNames.CONTENT_LENGTH, Integer.toString(payload.length));
                    return out.withConnection(connection -> {
                        attempt.sentOn(connection);
                        reuse.sending(connection);
                    }).sendByteArray(Mono.just(payload));
                })
                .response((res, content) -> {
                    attempt.answered();
                    int status = res.status().code();
                    if (status != 200) {
                        String retryAfter = res.responseHeaders().get(HttpHeaderNames.RETRY_AFTER);
                        return content.aggregate().asString(StandardCharsets.UTF_8).defaultIfEmpty("")
                                .flatMapMany(text -> Flux.error(errors.fromStatus(status, text, retryAfter)));
                    }
                    return content.asByteArray()
                            .<List<SseDecoder.Event>>handle((bytes, sink) -> {
                                List<SseDecoder.Event> events = decoder.feed(bytes);
                                if (!events.isEmpty()) {
                                    sink.next(events);
                                }
                            })
                            .concatWith(Mono.defer(() -> decoder.hasPartialEvent()
                                    ? Mono.error(new BackendException(BackendErrorKind.UPSTREAM,
                                            settings.serverName() + "'s event stream ended inside an event"))
                                    : Mono.empty()));
                });
    }

    /**
     * POSTs a non-streaming request and reads its answer whole ({@link WholeAnswerReader}), on a
     * kept-alive connection. No first-token or idle limit applies here (nothing comes before the end);
     * the caller bounds the wait. An upstream that streams anyway ({@code text/event-stream}) has its
     * chunks of {@code type} put together by {@code aggregate} into the answer it would have sent.
     */
    public <T> Mono<WholeAnswer> whole(String path, Object body, Class<T> type, Function<T, Map<String, Object>> extraOf,
                                Function<List<T>, Object> aggregate) {
        return Mono.defer(() -> {
            byte[] payload = payload(body);
            ReusedConnectionRetry.Attempt attempt = new ReusedConnectionRetry.Attempt();
            return postWhole(wholeClient(), path, payload, attempt)
                    .onErrorResume(attempt::worthAFreshConnection, e -> {
                        log.debug("POST {} failed on a reused connection before any answer ({}); once more on a new one",
                                path, e.toString());
                        return postWhole(freshWholes, path, payload, new ReusedConnectionRetry.Attempt());
                    });
        }).map(answer -> answer.streamed()
                ? wholeAnswers.read(json.writeValueAsBytes(aggregate.apply(chunks(answer.body(), type, extraOf))))
                : wholeAnswers.read(answer.body()))
                .onErrorMap(errors::fromThrowable);
    }

    private record RawAnswer(byte[] body, boolean streamed) {}

    /** The request's body: as the client sent it where the request carries it ({@link RawRequest}), else written here. */
    private byte[] payload(Object body) {
        byte[] raw = switch (body) {
            case ChatCompletionRequest r when r.raw() != null -> r.raw().write(r.extra(), json::writeValueAsBytes);
            case CompletionRequest r when r.raw() != null -> r.raw().write(r.extra(), json::writeValueAsBytes);
            default -> null;
        };
        return raw != null ? raw : json.writeValueAsBytes(body);
    }

    private Mono<RawAnswer> postWhole(HttpClient client, String path, byte[] payload,
                                      ReusedConnectionRetry.Attempt attempt) {
        return client.post()
                .uri(address.path(path))
                .send((req, out) -> {
                    req.header(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                            .header(HttpHeaderNames.ACCEPT, HttpHeaderValues.APPLICATION_JSON)
                            .header(HttpHeaderNames.CONTENT_LENGTH, Integer.toString(payload.length));
                    return out.withConnection(connection -> {
                        attempt.sentOn(connection);
                        reuse.sending(connection);
                    }).sendByteArray(Mono.just(payload));
                })
                .responseSingle((res, content) -> {
                    attempt.answered();
                    int status = res.status().code();
                    if (status != 200) {
                        String retryAfter = res.responseHeaders().get(HttpHeaderNames.RETRY_AFTER);
                        return content.asString(StandardCharsets.UTF_8).defaultIfEmpty("")
                                .flatMap(text -> Mono.error(errors.fromStatus(status, text, retryAfter)));
                    }
                    String contentType = res.responseHeaders().get(HttpHeaderNames.CONTENT_TYPE, "");
                    boolean streamed = contentType.startsWith("text/event-stream");
                    return content.asByteArray()
                            .switchIfEmpty(Mono.error(() -> new BackendException(BackendErrorKind.UPSTREAM,
                                    settings.serverName() + " answered with an empty body")))
                            .map(bytes -> new RawAnswer(bytes, streamed));
                });
    }

    /** The chunks of a whole event stream, up to [DONE]. */
    private <T> List<T> chunks(byte[] stream, Class<T> type, Function<T, Map<String, Object>> extraOf) {
        SseDecoder decoder = new SseDecoder();
        ChunkParser<T> parser = parserFor(type, false);
        List<T> chunks = new ArrayList<>();
        for (SseDecoder.Event event : decoder.feed(stream)) {
            if (event.isDone()) {
                return chunks;
            }
            chunks.add(toChunk(event, parser, extraOf));
        }
        throw new BackendException(BackendErrorKind.UPSTREAM, settings.serverName() + "'s stream ended before [DONE]");
    }

    /**
     * POSTs {@code body} for a small JSON answer (llama-server's {@code /apply-template}, {@code /tokenize}) on a
     * connection of its own, within the first-token timeout; an HTTP error is the mapped upstream error.
     */
    public Mono<JsonNode> postJson(String path, Object body) {
        return Mono.defer(() -> {
                    byte[] payload = json.writeValueAsBytes(body);
                    return freshProbes.post()
                            .uri(address.path(path))
                            .send((req, out) -> {
                                req.header(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                                        .header(HttpHeaderNames.CONTENT_LENGTH, Integer.toString(payload.length));
                                return out.sendByteArray(Mono.just(payload));
                            })
                            .responseSingle((res, content) -> content.asString(StandardCharsets.UTF_8).defaultIfEmpty("")
                                    .flatMap(text -> res.status().code() == 200 ? Mono.just(json.readTree(text))
                                            : Mono.error(errors.fromStatus(res.status().code(), text, null))));
                })
                .timeout(settings.firstTokenTimeout(), Mono.error(() -> BackendException.timeout(
                        settings.serverName() + " did not answer POST " + path + " within " + settings.firstTokenTimeout())))
                .onErrorMap(errors::fromThrowable);
    }

    /**
     * POSTs {@code body} within the health timeout for its status: whether the server serves {@code path} at all.
     * HTTP errors are answers, transport failures are errors.
     */
    public Mono<Answer> probe(String path, Object body) {
        return Mono.defer(() -> {
                    byte[] payload = json.writeValueAsBytes(body);
                    return freshProbes.post()
                            .uri(address.path(path))
                            .send((req, out) -> {
                                req.header(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                                        .header(HttpHeaderNames.CONTENT_LENGTH, Integer.toString(payload.length));
                                return out.sendByteArray(Mono.just(payload));
                            })
                            .responseSingle((res, content) -> content.asString(StandardCharsets.UTF_8).defaultIfEmpty("")
                                    .map(text -> new Answer(res.status().code(), text)));
                })
                .timeout(settings.healthTimeout(), Mono.error(() -> BackendException.timeout(
                        settings.serverName() + " did not answer POST " + path + " within " + settings.healthTimeout())))
                .onErrorMap(errors::fromThrowable);
    }

    /** GETs a small answer within the health timeout; HTTP errors are answers, transport failures are errors. */
    public Mono<Answer> get(String path) {
        return Mono.defer(() -> {
                    ReusedConnectionRetry.Attempt attempt = new ReusedConnectionRetry.Attempt();
                    return get(probes, path, attempt).onErrorResume(attempt::worthAFreshConnection,
                            e -> get(freshProbes, path, new ReusedConnectionRetry.Attempt()));
                })
                .timeout(settings.healthTimeout(), Mono.error(() -> BackendException.timeout(
                        settings.serverName() + " did not answer GET " + path + " within " + settings.healthTimeout())))
                .onErrorMap(errors::fromThrowable);
    }

    private Mono<Answer> get(HttpClient client, String path, ReusedConnectionRetry.Attempt attempt) {
        return client.doOnRequest((req, connection) -> attempt.sentOn(connection))
                .get()
                .uri(address.path(path))
                .responseSingle((res, content) -> {
                    attempt.answered();
                    return content.asString(StandardCharsets.UTF_8)
                            .defaultIfEmpty("")
                            .map(text -> new Answer(res.status().code(), text));
                });
    }

    public JsonMapper json() {
        return json;
    }

    @Override
    public void close() {
        closed = true;
        reuse.stop();
        loopClients.values().forEach(c -> c.pool().dispose());
        streamPool.dispose();
        probePool.dispose();
    }

    /** Reads one chunk from UTF-8 bytes. */
    @FunctionalInterface
    private interface ChunkParser<T> {
        T read(byte[] bytes, int offset, int length);
    }

    /** Chat chunks by the streaming {@link ChatChunkReader}; other types by data-binding. */
    @SuppressWarnings("unchecked")
    private <T> ChunkParser<T> parserFor(Class<T> type, boolean trimTimings) {
        if (type == ChatCompletionChunk.class) {
            ChatChunkReader.TimingsTrim trim = trimTimings ? new ChatChunkReader.TimingsTrim() : null;
            return (ChunkParser<T>) (ChunkParser<ChatCompletionChunk>) (bytes, offset, length)
                    -> chatChunks.read(bytes, offset, length, trim);
        }
        ObjectReader reader = json.readerFor(type);
        return reader::readValue;
    }

    /** The event's chunk, read straight from its bytes; an error event or an error object in a chunk is thrown. */
    private <T> T toChunk(SseDecoder.Event event, ChunkParser<T> parser, Function<T, Map<String, Object>> extraOf) {
        if (event.isError()) {
            JsonNode error = json.readTree(event.bytes(), event.offset(), event.length());
            throw errors.fromStreamError(error);
        }
        T chunk = parser.read(event.bytes(), event.offset(), event.length());
        Object error = extraOf.apply(chunk).get("error");
        if (error != null) {
            throw errors.fromStreamError(json.valueToTree(error));
        }
        return chunk;
    }
}
