package dev.lazarus.gateway.testing;

import dev.lazarus.backend.api.BackendCapabilities;
import dev.lazarus.backend.api.BackendConfig;
import dev.lazarus.backend.api.BackendDescriptor;
import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.BackendHealth;
import dev.lazarus.backend.api.ExpertPlacementView;
import dev.lazarus.backend.api.InferenceBackend;
import dev.lazarus.backend.api.ModelInfo;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.Completion;
import dev.lazarus.backend.api.openai.CompletionRequest;
import dev.lazarus.backend.api.openai.Usage;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A backend whose behaviour each request scripts through a pass-through field, so that tests
 * sharing one application context cannot disturb each other:
 *
 * <pre>{@code "script": {"alpha": {"fail": "UNAVAILABLE"}, "*": {"tokens": ["Hi", "!"], "delay_ms": 5}}}</pre>
 *
 * Keys are backend ids ({@code *} for every backend). Directives: {@code tokens} (default
 * "Hello", ",", " world"), {@code fail} (a {@link BackendErrorKind} name), {@code fail_after}
 * (tokens sent before failing; 0 fails before any chunk), {@code retry_after_seconds},
 * {@code delay_ms} (between chunks), {@code usage_on_last} (put usage on the last content chunk
 * instead of a separate one), {@code fail_calls} (fail only the first N calls that carry this
 * same script, then serve: a test that wants a fresh count adds a key of its own to the script), {@code first_delay_ms} (before the first chunk). Settings: {@code health} (UP, LOADING, DOWN), {@code completions}
 * (false to refuse legacy completions), {@code assistant-prefill} (false: cannot continue an answer),
 * and what {@link #describe()} reports about its model: {@code context-length}, {@code architecture},
 * {@code quantization}, {@code random-weights}.
 */
public final class ScriptedBackend implements InferenceBackend, ExpertPlacementView {

    private static final List<String> DEFAULT_TOKENS = List.of("Hello", ",", " world");

    private final BackendConfig config;
    private final AtomicReference<BackendHealth> health;
    private final AtomicReference<ChatCompletionRequest> lastChat = new AtomicReference<>();
    private final AtomicReference<CompletionRequest> lastCompletion = new AtomicReference<>();
    private final AtomicInteger calls = new AtomicInteger();
    private final Map<Map<String, Object>, AtomicInteger> callsPerScript = new java.util.concurrent.ConcurrentHashMap<>();
    private final AtomicInteger rebalances = new AtomicInteger(1);
    private volatile boolean closed;

    ScriptedBackend(BackendConfig config) {
        this.config = config;
        this.health = new AtomicReference<>(new BackendHealth(
                BackendHealth.Status.valueOf(config.string("health", "UP")), "scripted", Map.of()));
    }

    public void setHealth(BackendHealth.Status status) {
        health.set(new BackendHealth(status, "set by test", Map.of()));
    }

    /** A health of the test's own (a load in progress, say), from the next check on. */
    public void setHealth(BackendHealth health) {
        this.health.set(health);
    }

    public ChatCompletionRequest lastChat() {
        return lastChat.get();
    }

    public CompletionRequest lastCompletion() {
        return lastCompletion.get();
    }

    public int calls() {
        return calls.get();
    }

    public boolean closed() {
        return closed;
    }

    @Override
    public String id() {
        return config.id();
    }

    @Override
    public BackendDescriptor describe() {
        Map<String, Object> facts = new java.util.LinkedHashMap<>();
        if (config.has("architecture")) {
            facts.put("architecture", config.string("architecture", null));
        }
        if (config.has("quantization")) {
            facts.put("quantization", config.string("quantization", null));
        }
        if (config.bool("random-weights", false)) {
            facts.put("random_weights", true);
        }
        if (config.has("model-path")) {
            facts.put("model_path", config.string("model-path", null));
            facts.put("cache_dir", config.string("model-path", null));
        }
        ModelInfo model = new ModelInfo("scripted", "tests", config.integer("context-length", 0), facts);
        // "models": the ids the backend lists, as a server of several models does
        List<ModelInfo> models = config.has("models") ? config.strings("models").stream()
                .map(id -> new ModelInfo(id, "tests", 0, Map.of())).toList() : List.of(model);
        return new BackendDescriptor(config.id(), "scripted", models,
                new BackendCapabilities(config.bool("completions", true), false, false,
                        config.bool("assistant-prefill", true), true));
    }

    @Override
    public Mono<BackendHealth> health() {
        return Mono.fromSupplier(health::get);
    }

    @Override
    public Flux<ChatCompletionChunk> chat(ChatCompletionRequest request) {
        lastChat.set(request);
        calls.incrementAndGet();
        Script script = Script.of(request.extra(), id());
        String id = "scripted-chat-" + calls.get();
        return play(script,
                () -> ChatCompletionChunk.of(id, 1, request.model(),
                        List.of(new ChatCompletionChunk.Choice(0, ChatCompletionChunk.Delta.role("assistant"), null,
                                null)), null),
                token -> ChatCompletionChunk.of(id, 1, request.model(),
                        List.of(new ChatCompletionChunk.Choice(0, ChatCompletionChunk.Delta.content(token), null,
                                null)), null),
                () -> ChatCompletionChunk.of(id, 1, request.model(),
                        List.of(new ChatCompletionChunk.Choice(0, new ChatCompletionChunk.Delta(null, null, null, null),
                                null, "stop")), null),
                usage -> ChatCompletionChunk.of(id, 1, request.model(), List.of(), usage),
                ChatCompletionChunk::withUsage);
    }

    @Override
    public Flux<Completion> completion(CompletionRequest request) {
        lastCompletion.set(request);
        calls.incrementAndGet();
        Script script = Script.of(request.extra(), id());
        String id = "scripted-cmpl-" + calls.get();
        return play(script,
                null,
                token -> Completion.of(id, 1, request.model(), List.of(new Completion.Choice(0, token, null, null)),
                        null),
                () -> Completion.of(id, 1, request.model(), List.of(new Completion.Choice(0, "", null, "stop")), null),
                usage -> Completion.of(id, 1, request.model(), List.of(), usage),
                Completion::withUsage);
    }

    private <T> Flux<T> play(Script script, java.util.function.Supplier<T> roleChunk, Function<String, T> tokenChunk,
            java.util.function.Supplier<T> finishChunk, Function<Usage, T> usageChunk,
            java.util.function.BiFunction<T, Usage, T> withUsage) {
        if (closed) {
            return Flux.error(BackendException.unavailable("backend '" + id() + "' is closed"));
        }
        if (script.fail != null && script.failCalls > 0
                && callsPerScript.computeIfAbsent(script.source, k -> new AtomicInteger()).incrementAndGet() > script.failCalls) {
            script = script.serving();
        }
        if (script.fail != null && script.failAfter == 0) {
            return Flux.error(script.failure(id()));
        }
        List<T> chunks = new ArrayList<>();
        if (roleChunk != null) {
            chunks.add(roleChunk.get());
        }
        List<String> tokens = script.failAfter > 0 ? script.tokens.subList(0, Math.min(script.failAfter,
                script.tokens.size())) : script.tokens;
        tokens.forEach(t -> chunks.add(tokenChunk.apply(t)));
        Usage usage = Usage.of(3, tokens.size());
        Flux<T> body;
        if (script.fail != null) {
            body = Flux.fromIterable(chunks).concatWith(Flux.error(script.failure(id())));
        } else if (script.usageOnLast) {
            T last = withUsage.apply(finishChunk.get(), usage);
            chunks.add(last);
            body = Flux.fromIterable(chunks);
        } else {
            chunks.add(finishChunk.get());
            chunks.add(usageChunk.apply(usage));
            body = Flux.fromIterable(chunks);
        }
        body = script.delay.isZero() ? body : body.delayElements(script.delay);
        return script.firstDelay.isZero() ? body : body.delaySubscription(script.firstDelay);
    }

    @Override
    public void close() {
        closed = true;
    }

    /** A fixed two-tier placement when setting {@code placement} is true; none otherwise (like a dense model). */
    @Override
    public java.util.Optional<PlacementSnapshot> expertPlacement() {
        if (!config.bool("placement", false)) {
            return java.util.Optional.empty();
        }
        return java.util.Optional.of(new PlacementSnapshot("dynamic", null, java.time.Instant.EPOCH,
                rebalances.get(), List.of(new TierStats("ram", 1, 1024, 2048, 7, 0.25),
                        new TierStats("mmap", 3, 3072, -1, 21, 0.75)),
                List.of(new LayerPlacement(0, List.of("ram", "mmap", "mmap", "mmap"), List.of(7L, 9L, 6L, 6L)))));
    }

    @Override
    public java.util.Optional<PlacementSnapshot> rebalanceExperts() {
        if (config.bool("placement", false)) {
            rebalances.incrementAndGet();
        }
        return expertPlacement();
    }

    private record Script(List<String> tokens, BackendErrorKind fail, int failAfter, Duration retryAfter,
            Duration delay, boolean usageOnLast, int failCalls, Duration firstDelay, Map<String, Object> source) {

        @SuppressWarnings("unchecked")
        static Script of(Map<String, Object> extra, String backendId) {
            Map<String, Object> all = extra.get("script") instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
            Map<String, Object> mine = all.get(backendId) instanceof Map<?, ?> m ? (Map<String, Object>) m
                    : all.get("*") instanceof Map<?, ?> m2 ? (Map<String, Object>) m2 : Map.of();
            List<String> tokens = mine.get("tokens") instanceof List<?> l ? l.stream().map(String::valueOf).toList()
                    : DEFAULT_TOKENS;
            BackendErrorKind fail = mine.get("fail") instanceof String s ? BackendErrorKind.valueOf(s) : null;
            int failAfter = mine.get("fail_after") instanceof Number n ? n.intValue() : 0;
            Duration retryAfter = mine.get("retry_after_seconds") instanceof Number n
                    ? Duration.ofSeconds(n.longValue()) : null;
            Duration delay = mine.get("delay_ms") instanceof Number n ? Duration.ofMillis(n.longValue()) : Duration.ZERO;
            int failCalls = mine.get("fail_calls") instanceof Number n ? n.intValue() : 0;
            Duration firstDelay = mine.get("first_delay_ms") instanceof Number n
                    ? Duration.ofMillis(n.longValue()) : Duration.ZERO;
            return new Script(tokens, fail, failAfter, retryAfter, delay, Boolean.TRUE.equals(mine.get("usage_on_last")),
                    failCalls, firstDelay, all);
        }

        Script serving() {
            return new Script(tokens, null, 0, null, delay, usageOnLast, 0, firstDelay, source);
        }

        BackendException failure(String backendId) {
            return new BackendException(fail, "scripted " + fail + " from " + backendId,
                    fail == BackendErrorKind.INVALID_REQUEST ? "messages" : null, retryAfter, null);
        }
    }
}
