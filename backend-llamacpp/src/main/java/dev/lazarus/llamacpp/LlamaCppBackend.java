package dev.lazarus.llamacpp;

import dev.lazarus.backend.api.BackendCapabilities;
import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendDescriptor;
import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.BackendHealth;
import dev.lazarus.backend.api.CallContext;
import dev.lazarus.backend.api.ChatProtocol;
import dev.lazarus.backend.api.ChatEventStreams;
import dev.lazarus.backend.api.GeneratedTokens;
import dev.lazarus.backend.api.InferenceBackend;
import dev.lazarus.backend.api.JsonEndpoint;
import dev.lazarus.backend.api.ModelInfo;
import dev.lazarus.backend.api.NativeProtocols;
import dev.lazarus.backend.api.ProtocolEvent;
import dev.lazarus.backend.api.ProtocolMode;
import dev.lazarus.backend.api.Redactor;
import dev.lazarus.backend.api.TokenPrefix;
import dev.lazarus.backend.api.WholeAnswer;
import dev.lazarus.backend.api.WholeAnswers;
import dev.lazarus.backend.api.openai.ChatCompletionAggregator;
import dev.lazarus.backend.api.openai.CompletionAggregator;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatEvents;
import dev.lazarus.backend.api.openai.Completion;
import dev.lazarus.backend.api.openai.CompletionRequest;
import dev.lazarus.llamacpp.http.LlamaServerClient;
import dev.lazarus.llamacpp.http.ProgressSource;
import dev.lazarus.llamacpp.process.AttentionFlags;
import dev.lazarus.llamacpp.process.LlamaServerCommand;
import dev.lazarus.llamacpp.process.LlamaServerSupervisor;
import dev.lazarus.llamacpp.wire.PromptProgress;
import dev.lazarus.llamacpp.wire.ServerInfo;
import dev.lazarus.llamacpp.wire.UpstreamErrors;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A llama-server (kind {@code llamacpp}), or any other OpenAI-compatible server (kind
 * {@code openai}: vLLM, SGLang, a hosted API; the same client without llama.cpp's own endpoints),
 * behind its OpenAI endpoints ({@code /v1/chat/completions}, {@code /v1/completions}),
 * optionally started and kept alive by this backend ({@code binary} set). Requests are forwarded as
 * streams with their unknown fields ({@code top_k}, {@code grammar}, ...) untouched; chunks come
 * back with llama.cpp's own fields ({@code timings}) kept in their {@code extra}.
 */
public final class LlamaCppBackend implements InferenceBackend, WholeAnswers, ChatEventStreams, NativeProtocols {

    private static final Logger log = LoggerFactory.getLogger(LlamaCppBackend.class);

    private final String id;
    private final LlamaCppSettings settings;
    private final LlamaServerClient client;
    private final LlamaServerSupervisor supervisor;
    /** Everything llama-server says passes it before it is logged, reported or shown. */
    private final Redactor redactor;
    private final AssistantPrefill prefill;
    private final ProtocolProbe protocols;
    private final AtomicReference<ServerInfo> info = new AtomicReference<>();
    private volatile Described described;
    /**
     * Passed on to the server's own endpoint, the request as it came (its {@code model} the backend's name, or
     * the server's own where it was not told one), the answer as the server gave it.
     */
    @Override
    public Mono<Map<String, Object>> json(JsonEndpoint endpoint, Map<String, Object> request) {
        if (!settings.jsonEndpoints().contains(endpoint)) {
            return InferenceBackend.super.json(endpoint, request);
        }
        return client.postJson(endpoint.path(), request).flatMap(answer -> answer.isObject()
                ? Mono.just(client.json().convertValue(answer, JSON_OBJECT))
                : Mono.error(new BackendException(BackendErrorKind.UPSTREAM,
                        settings.serverName() + " answered " + endpoint.path() + " with no JSON object")));
    }

    private static final TypeReference<Map<String, Object>> JSON_OBJECT = new TypeReference<>() {};

    /** The client's request passed on to the server's own endpoint, its events as they came. */
    @Override
    public Flux<List<ProtocolEvent>> protocolEvents(ChatProtocol protocol, Map<String, Object> request) {
        if (protocols.modes().get(protocol) != ProtocolMode.NATIVE) {
            return Flux.error(notNative(protocol));
        }
        // Messages: llama-server sends no progress events there (b11669); its slots tell how far the prompt is read
        Map<String, Object> sent = request;
        ProgressSource progress = ProgressSource.NONE;
        if (protocol == ChatProtocol.RESPONSES && settings.llamaServer()) {
            sent = new LinkedHashMap<>(request);
            progress = PromptProgress.ask(sent) ? ProgressSource.EVENTS : ProgressSource.NONE;
        } else if (protocol == ChatProtocol.MESSAGES && settings.llamaServer()) {
            progress = ProgressSource.SLOTS;
        }
        return client.events(protocol.path(), sent, progress).onErrorMap(error -> protocols.notServed(protocol, error));
    }

    /** The client's request passed on to the server's own endpoint, its answer as the server gave it. */
    @Override
    public Mono<Map<String, Object>> protocolAnswer(ChatProtocol protocol, Map<String, Object> request) {
        if (protocols.modes().get(protocol) != ProtocolMode.NATIVE) {
            return Mono.error(notNative(protocol));
        }
        return client.whole(protocol.path(), request).map(answer -> client.json().convertValue(answer, JSON_OBJECT))
                .onErrorMap(error -> protocols.notServed(protocol, error));
    }

    private BackendException notNative(ChatProtocol protocol) {
        return BackendException.invalidRequest("backend '" + id + "' does not pass " + protocol.path()
                + " through to its server", "model");
    }

    /** The model's name for token-exact continuation; null while unknown or when turned off. */
    private final AtomicReference<String> identity = new AtomicReference<>();
    private final TokenContinuation tokenContinuation;
    private final AtomicBoolean closed = new AtomicBoolean();

    public LlamaCppBackend(BackendConfig config) {
        this(config.id(), LlamaCppSettings.from(config), config.redactor(), Clock.systemUTC());
    }

    LlamaCppBackend(String id, LlamaCppSettings settings, Redactor redactor, Clock clock) {
        this.id = id;
        this.settings = settings;
        this.redactor = redactor.with(settings.apiKey() == null ? List.of() : List.of(settings.apiKey()));
        this.prefill = new AssistantPrefill(id, settings.assistantPrefill());
        this.protocols = new ProtocolProbe(id, settings.protocols(), settings.probedProtocols());
        // An error object or a trimmed chunk lacks "created"; that is no reason to fail the parse.
        JsonMapper json = JsonMapper.builder().disable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES).build();
        this.client = new LlamaServerClient(id, settings.client(), json, new UpstreamErrors(json, clock, this.redactor,
                settings.serverName()));
        this.tokenContinuation = new TokenContinuation(client);
        identity.set(ModelIdentity.configured(settings.modelIdentity()));
        if (settings.supervised()) {
            this.supervisor = new LlamaServerSupervisor(id, settings.supervision(), settings.modelName(),
                    settings.apiKey(), this.redactor, this::answersHealthy, this::learnServerInfo, clock);
            supervisor.start();
        } else {
            this.supervisor = null;
            learnServerInfo();
        }
        log.info("backend '{}': {}", id, settings);
    }

    @Override
    public String id() {
        return id;
    }

    public LlamaCppSettings settings() {
        return settings;
    }

    /** The PID of the llama-server this backend started, while it runs; empty when not supervised. */
    public OptionalLong serverPid() {
        return supervisor == null ? OptionalLong.empty() : supervisor.pid();
    }

    /** How often the supervised llama-server was started again after dying; 0 when not supervised. */
    public int serverRestarts() {
        return supervisor == null ? 0 : supervisor.restarts();
    }

    /** The supervisor, or null when someone else runs llama-server (for tests in this package). */
    LlamaServerSupervisor supervisor() {
        return supervisor;
    }

    /** What the server said about itself ({@code /props}, {@code /v1/models}), once it has answered. */
    public Optional<ServerInfo> serverInfo() {
        return Optional.ofNullable(info.get());
    }

    @Override
    public BackendDescriptor describe() {
        ServerInfo known = info.get();
        boolean prefills = prefill.supported();
        Map<ChatProtocol, ProtocolMode> modes = protocols.modes();
        Described last = described;
        if (last != null && last.info() == known && last.prefills() == prefills && last.modes() == modes) {
            return last.descriptor(); // asked on every request's routing: built again only when what it says changed
        }
        BackendDescriptor descriptor = describe(known, prefills, modes);
        described = new Described(known, prefills, modes, descriptor);
        return descriptor;
    }

    /** The descriptor last built, and what it was built from. */
    private record Described(ServerInfo info, boolean prefills, Map<ChatProtocol, ProtocolMode> modes,
                             BackendDescriptor descriptor) {}

    private BackendDescriptor describe(ServerInfo known, boolean prefills, Map<ChatProtocol, ProtocolMode> modes) {
        Map<String, Object> facts = new java.util.LinkedHashMap<>(known == null ? Map.of() : known.metadata());
        if (settings.supervision() != null) {
            // the server this backend starts: its attention flags are known from the command line
            facts.putAll(AttentionFlags.of(LlamaServerCommand.build(settings.supervision(), null)));
        }
        ModelInfo model = new ModelInfo(modelId(known), settings.llamaServer() ? "llama.cpp" : "openai-compatible",
                known == null ? 0 : known.contextLength(), facts);
        // llama-server continues a trailing assistant message unless its chat template refuses it.
        return new BackendDescriptor(id, settings.kind(), List.of(model),
                new BackendCapabilities(true, true, true, prefills, true, settings.jsonEndpoints(), modes));
    }

    /** The model's name for token-exact continuation ({@link ModelIdentity}), once known; never for kind openai. */
    @Override
    public Optional<String> tokenIdentity() {
        return Optional.ofNullable(identity.get());
    }

    /** The server's answer to {@code /health}, its own message included, redacted like all its text. */
    @Override
    public Mono<BackendHealth> health() {
        return rawHealth().map(h -> new BackendHealth(h.status(), redactor.redact(h.detail()),
                redactor.redactValues(h.details())));
    }

    private Mono<BackendHealth> rawHealth() {
        if (closed.get()) {
            return Mono.just(BackendHealth.down("closed"));
        }
        if (supervisor != null) {
            switch (supervisor.state()) {
                case STARTING -> {
                    return Mono.just(BackendHealth.loading(supervisor.describeState()));
                }
                case BACKOFF, STOPPED -> {
                    return Mono.just(BackendHealth.down(supervisor.describeState()));
                }
                case RUNNING -> {
                    // fall through to asking the server itself
                }
            }
        }
        String server = settings.serverName();
        return client.get(settings.healthPath())
                .flatMap(answer -> switch (answer.status()) {
                    case 200 -> healthyDetails().map(details -> new BackendHealth(BackendHealth.Status.UP, "ok", details));
                    case 503 -> Mono.just(BackendHealth.loading(server + ": " + errorMessage(answer.body(), "loading")));
                    default -> Mono.just(BackendHealth.down(server + " " + settings.healthPath() + " answered " + answer.status()));
                })
                .onErrorResume(BackendException.class, e -> Mono.just(BackendHealth.down(e.getMessage())));
    }

    /**
     * A chat answer from {@code /v1/chat/completions}, its token ids recorded where the caller keeps a
     * {@link GeneratedTokens} in the subscriber context; or, where the caller offers a
     * {@link TokenPrefix} of this backend's model, the continuation of that answer from its exact
     * tokens through {@code /completion} ({@link TokenContinuation}).
     */
    @Override
    public Flux<ChatCompletionChunk> chat(ChatCompletionRequest request) {
        return Flux.deferContextual(context -> {
            String model = identity.get();
            GeneratedTokens record = CallContext.generatedTokens(context).orElse(null);
            TokenPrefix prefix = CallContext.tokenPrefix(context).orElse(null);
            if (prefix != null && model != null && model.equals(prefix.modelIdentity())
                    && TokenContinuation.takes(request)) {
                log.debug("backend '{}': continuing an answer from its {} tokens", id, prefix.ids().size());
                return tokenContinuation.chat(request, prefix, record);
            }
            return openAiChat(request, record, model);
        });
    }

    /**
     * A chat answer as its server's events, scanned, in the pieces they came in; where the caller records
     * the answer's token ids or offers a prefix to continue from, the typed {@link #chat} (one chunk a piece).
     */
    @Override
    public Flux<ChatEvents> chatEvents(ChatCompletionRequest request) {
        return Flux.deferContextual(context -> {
            if (CallContext.asksForTokens(context)) {
                return chat(request).map(ChatEvents::of);
            }
            ChatCompletionRequest upstream = request.asUsageStream();
            boolean counted = countsPrompt(upstream.extra());
            return client.chatEvents("/v1/chat/completions", upstream, counted, asksProgress(upstream.extra()))
                    .doOnError(error -> prefill.observe(request, error));
        });
    }

    private Flux<ChatCompletionChunk> openAiChat(ChatCompletionRequest request, GeneratedTokens record, String model) {
        ChatCompletionRequest upstream = request.asUsageStream();
        boolean counted = countsPrompt(upstream.extra());
        TokenRecorder recorder = TokenRecorder.attach(upstream, record, model);
        // The reader trims the timings of token chunks as it reads them, except while the recorder needs
        // every chunk's predicted_n; the transform covers those and the rare chunk handed to data-binding.
        Flux<ChatCompletionChunk> chunks = client.stream("/v1/chat/completions", upstream, ChatCompletionChunk.class,
                chunk -> chunk.usage() != null, chunk -> orEmpty(chunk.extra()), counted && recorder == null,
                asksProgress(upstream.extra()));
        if (recorder != null) {
            chunks = chunks.map(recorder::observe); // drops the server's bytes where it strips logprobs
        } else if (record != null) {
            record.lost();
        }
        return chunks.transform(c -> counted ? timingsOnFirstAndLast(c, ChatCompletionChunk::extra,
                        chunk -> chunk.usage() != null, ChatCompletionChunk::withoutRaw) : c)
                .doOnError(error -> prefill.observe(request, error));
    }

    /**
     * Asks a llama-server for {@code timings} on every token ({@code timings_per_token}) unless the
     * client chose either way: the first token's {@code prompt_n + cache_n} is the prompt's exact size,
     * which a resumed stream owes the client as {@code prompt_tokens} when this server dies before
     * its usage chunk. True when this backend added the flag (and then trims what it costs).
     */
    private boolean countsPrompt(Map<String, Object> extra) {
        if (!settings.llamaServer() || extra.containsKey("timings_per_token")) {
            return false;
        }
        extra.put("timings_per_token", true);
        return true;
    }

    /**
     * Asks a llama-server for its prompt-progress events unless the client chose either way: they tell the caller
     * ({@link dev.lazarus.backend.api.PrefillProgress}) and this backend's first-token timeout that a long prompt
     * is being read, and are taken out of the stream ({@link PromptProgress}). True when this backend added the flag.
     */
    private boolean asksProgress(Map<String, Object> extra) {
        return settings.llamaServer() && PromptProgress.ask(extra);
    }

    /**
     * The stream as the client would have had it without {@code timings_per_token}, but for the
     * first chunk that carries {@code timings}: later ones lose them until the final chunk.
     */
    private static <T> Flux<T> timingsOnFirstAndLast(Flux<T> chunks, Function<T, Map<String, Object>> extraOf,
                                                     Predicate<T> isFinal, UnaryOperator<T> changed) {
        return Flux.defer(() -> {
            boolean[] seen = {false};
            return chunks.map(chunk -> {
                Map<String, Object> extra = extraOf.apply(chunk);
                if (extra == null || !extra.containsKey("timings") || isFinal.test(chunk)) {
                    return chunk;
                }
                boolean first = !seen[0];
                seen[0] = true;
                if (!first && extra instanceof HashMap<String, Object> mutable) {
                    mutable.remove("timings");
                    return changed.apply(chunk);
                }
                return chunk;
            });
        });
    }

    @Override
    public Flux<Completion> completion(CompletionRequest request) {
        CompletionRequest upstream = request.asUsageStream();
        boolean counted = countsPrompt(upstream.extra());
        return client.stream("/v1/completions", upstream, Completion.class,
                        chunk -> chunk.usage() != null, chunk -> orEmpty(chunk.extra()), false,
                        asksProgress(upstream.extra()))
                .transform(chunks -> counted ? timingsOnFirstAndLast(chunks, Completion::extra,
                        chunk -> chunk.usage() != null, UnaryOperator.identity()) : chunks);
    }

    /** The request as the client sent it, non-streaming; the answer passed on whole. */
    @Override
    public Mono<WholeAnswer> chatWhole(ChatCompletionRequest request) {
        return client.whole("/v1/chat/completions", request, ChatCompletionChunk.class, chunk -> orEmpty(chunk.extra()),
                        chunks -> {
                            ChatCompletionAggregator aggregator = new ChatCompletionAggregator();
                            chunks.forEach(aggregator::add);
                            return aggregator.result();
                        })
                .doOnError(error -> prefill.observe(request, error));
    }

    @Override
    public Mono<WholeAnswer> completionWhole(CompletionRequest request) {
        return client.whole("/v1/completions", request, Completion.class, chunk -> orEmpty(chunk.extra()),
                chunks -> {
                    CompletionAggregator aggregator = new CompletionAggregator();
                    chunks.forEach(aggregator::add);
                    return aggregator.result();
                });
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        if (supervisor != null) {
            supervisor.close();
        }
        client.close();
    }

    /** The configured name wins; then what the server lists; then the model file's name; then our id. */
    private String modelId(ServerInfo known) {
        if (settings.modelName() != null) {
            return settings.modelName();
        }
        if (known != null && known.modelId() != null) {
            return known.modelId();
        }
        if (settings.supervised() && settings.supervision().model() != null) {
            return Path.of(settings.supervision().model()).getFileName().toString();
        }
        return id;
    }

    /** Slot occupancy from {@code /slots} (absent when the server runs with {@code --no-slots}). */
    private Mono<Map<String, Object>> healthyDetails() {
        if (!settings.llamaServer()) {
            if (info.get() == null) {
                learnServerInfo();
            }
            return Mono.just(Map.of());
        }
        Mono<Map<String, Object>> slots = client.get("/slots")
                .filter(LlamaServerClient.Answer::ok)
                .map(answer -> {
                    JsonNode array = client.json().readTree(answer.body());
                    int busy = 0;
                    for (JsonNode slot : array) {
                        busy += slot.path("is_processing").asBoolean(false) ? 1 : 0;
                    }
                    Map<String, Object> details = new LinkedHashMap<>();
                    details.put("slots_total", array.size());
                    details.put("slots_busy", busy);
                    return details;
                })
                .onErrorResume(e -> Mono.empty())
                .defaultIfEmpty(new LinkedHashMap<>());
        if (info.get() == null) {
            learnServerInfo();
        }
        return slots;
    }

    /** Reads /props and /v1/models in the background; describe() shows them once they came. */
    private void learnServerInfo() {
        protocols.probe(client).subscribe();
        if (!settings.llamaServer()) {
            // Other servers have no /props: what /v1/models lists is all there is to learn.
            client.get("/v1/models").filter(LlamaServerClient.Answer::ok)
                    .map(answer -> ServerInfo.fromModelList(client.json().readTree(answer.body()), redactor))
                    .subscribe(info::set, e -> log.debug("backend '{}': server facts not available yet: {}", id,
                            redactor.redact(e.toString())));
            return;
        }
        Mono.zip(client.get("/props"), client.get("/v1/models"))
                .filter(both -> both.getT1().ok() && both.getT2().ok())
                .map(both -> {
                    JsonNode props = client.json().readTree(both.getT1().body());
                    JsonNode models = client.json().readTree(both.getT2().body());
                    if (ModelIdentity.isAuto(settings.modelIdentity())) {
                        identity.set(ModelIdentity.derived(props, models));
                    }
                    return ServerInfo.from(props, models, redactor);
                })
                .subscribe(info::set, e -> log.debug("backend '{}': server facts not available yet: {}", id,
                        redactor.redact(e.toString())));
    }

    /** The supervisor's blocking probe; it runs on the supervisor's virtual thread. */
    private boolean answersHealthy() {
        try {
            return Boolean.TRUE.equals(client.get(settings.healthPath()).map(LlamaServerClient.Answer::ok).onErrorReturn(false).block());
        } catch (RuntimeException interrupted) {
            return false;
        }
    }

    private String errorMessage(String body, String fallback) {
        try {
            return client.json().readTree(body).path("error").path("message").asString(fallback);
        } catch (RuntimeException notJson) {
            return fallback;
        }
    }

    private static Map<String, Object> orEmpty(Map<String, Object> m) {
        return m == null ? Map.of() : m;
    }
}
