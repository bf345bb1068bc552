package dev.lazarus.kt.backend;

import dev.lazarus.backend.api.BackendCapabilities;
import dev.lazarus.backend.api.BackendDescriptor;
import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.BackendHealth;
import dev.lazarus.backend.api.ExpertPlacementView;
import dev.lazarus.backend.api.InferenceBackend;
import dev.lazarus.backend.api.ModelInfo;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.backend.api.openai.Completion;
import dev.lazarus.backend.api.openai.CompletionRequest;
import dev.lazarus.backend.api.openai.Logprobs;
import dev.lazarus.backend.api.openai.Usage;
import dev.lazarus.kt.runtime.SequenceHandle;
import java.lang.System.Logger.Level;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;

/**
 * The {@code kt-native} backend: the in-JVM engine behind the SPI. The model loads in the background
 * (health says LOADING with a percentage until then); every call streams chunks that end with a
 * usage chunk, and cancelling the stream cancels the sequence.
 */
public final class KtNativeBackend implements InferenceBackend, ExpertPlacementView {

    private static final System.Logger LOG = System.getLogger(KtNativeBackend.class.getName());
    private static final BackendCapabilities CAPABILITIES = new BackendCapabilities(true, false, true, true, false);

    private final String id;
    private final KtNativeSettings settings;
    private final CompletableFuture<LoadedModel> loaded = new CompletableFuture<>();
    private volatile double progress;
    private volatile boolean closed;

    KtNativeBackend(String id, KtNativeSettings settings) {
        this.id = id;
        this.settings = settings;
        Thread.ofPlatform().name("kt-load-" + id).daemon().start(() -> {
            try {
                LoadedModel model = new ModelLoader(id, settings).load(p -> progress = p);
                if (!loaded.complete(model) || closed) {
                    model.close();
                }
            } catch (RuntimeException | Error e) {
                LOG.log(Level.ERROR, "kt-native backend " + id + " failed to load " + settings.model(), e);
                loaded.completeExceptionally(e);
            }
        });
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public BackendDescriptor describe() {
        LoadedModel m = ready();
        ModelInfo info = m == null
                ? new ModelInfo(settings.modelName(), "lazarus", 0, Map.of("status", "loading"))
                : new ModelInfo(settings.modelName(), "lazarus", m.engine().options().contextSize(), m.facts());
        return new BackendDescriptor(id, KtNativeBackendFactory.KIND, List.of(info), CAPABILITIES);
    }

    @Override
    public Mono<BackendHealth> health() {
        return Mono.fromSupplier(() -> {
            if (closed) {
                return BackendHealth.down("closed");
            }
            if (loaded.isCompletedExceptionally()) {
                return BackendHealth.down("loading failed: " + loaded.exceptionNow().getMessage());
            }
            LoadedModel m = ready();
            if (m == null) {
                return new BackendHealth(BackendHealth.Status.LOADING,
                        "loading " + settings.modelName() + " (" + Math.round(progress * 100) + " %)",
                        Map.of("progress", progress));
            }
            return new BackendHealth(BackendHealth.Status.UP, "ok", Map.of("sequences", m.engine().load()));
        });
    }

    @Override
    public Optional<PlacementSnapshot> expertPlacement() {
        return Optional.ofNullable(ready()).map(LoadedModel::placement).map(p -> p.snapshot());
    }

    @Override
    public Optional<PlacementSnapshot> rebalanceExperts() {
        return Optional.ofNullable(ready()).map(LoadedModel::placement).map(p -> {
            p.rebalance();
            return p.snapshot();
        });
    }

    @Override
    public Flux<ChatCompletionChunk> chat(ChatCompletionRequest request) {
        return Flux.defer(() -> {
            LoadedModel m = requireReady(request.model());
            String prompt = renderChat(m, request.messages());
            String chunkId = "chatcmpl-" + UUID.randomUUID();
            long created = System.currentTimeMillis() / 1000;
            Function<List<ChatCompletionChunk.Choice>, ChatCompletionChunk> chunk =
                    choices -> ChatCompletionChunk.of(chunkId, created, settings.modelName(), choices, null);
            boolean logprobs = Boolean.TRUE.equals(request.logprobs());
            int top = request.topLogprobs() == null ? 0 : request.topLogprobs();
            return generate(m, prompt, request.effectiveMaxTokens(), request.stop(), logprobs, top,
                    sink -> sink.next(chunk.apply(List.of(new ChatCompletionChunk.Choice(0,
                            ChatCompletionChunk.Delta.role("assistant"), null, null)))),
                    (sink, text, lp) -> sink.next(chunk.apply(List.of(new ChatCompletionChunk.Choice(0,
                            ChatCompletionChunk.Delta.content(text), lp == null ? null : new Logprobs(lp), null)))),
                    (sink, finish, usage) -> {
                        sink.next(chunk.apply(List.of(new ChatCompletionChunk.Choice(0,
                                new ChatCompletionChunk.Delta(null, null, null, null), null, finish))));
                        sink.next(ChatCompletionChunk.of(chunkId, created, settings.modelName(), List.of(), usage));
                    });
        });
    }

    @Override
    public Flux<Completion> completion(CompletionRequest request) {
        return Flux.defer(() -> {
            LoadedModel m = requireReady(request.model());
            String prompt = request.promptText();
            if (prompt == null) {
                throw BackendException.invalidRequest("prompt must be a string", "prompt");
            }
            String completionId = "cmpl-" + UUID.randomUUID();
            long created = System.currentTimeMillis() / 1000;
            return this.<Completion>generate(m, prompt, request.maxTokens(), request.stop(), false, 0, sink -> { },
                    (sink, text, lp) -> sink.next(Completion.of(completionId, created, settings.modelName(),
                            List.of(new Completion.Choice(0, text, null, null)), null)),
                    (sink, finish, usage) -> {
                        sink.next(Completion.of(completionId, created, settings.modelName(),
                                List.of(new Completion.Choice(0, "", null, finish)), null));
                        sink.next(Completion.of(completionId, created, settings.modelName(), List.of(), usage));
                    });
        }).onErrorMap(e -> !(e instanceof BackendException),
                e -> new BackendException(BackendErrorKind.INTERNAL, e.getMessage(), e));
    }

    private interface TextWriter<T> {
        void write(FluxSink<T> sink, String text, List<Logprobs.TokenLogprob> logprobs);
    }

    private interface FinishWriter<T> {
        void write(FluxSink<T> sink, String finishReason, Usage usage);
    }

    /** One generation as a stream: start, text deltas, finish and usage, cancelled with the subscription. */
    private <T> Flux<T> generate(LoadedModel m, String prompt, Integer maxTokens, List<String> stop, boolean logprobs,
                                 int topLogprobs, java.util.function.Consumer<FluxSink<T>> start,
                                 TextWriter<T> text, FinishWriter<T> finish) {
        int[] tokens = m.tokenizer().encode(prompt, true, true);
        int limit = maxTokens == null || maxTokens <= 0 ? Integer.MAX_VALUE : maxTokens;
        return Flux.create(sink -> {
            start.accept(sink);
            Generation generation = new Generation(m.tokenizer(), new TokenSelector(m.tokenizer(), logprobs,
                    topLogprobs), stop, limit, tokens.length, new GenerationEvents() {
                @Override
                public void text(String delta, List<Logprobs.TokenLogprob> lp) {
                    text.write(sink, delta, lp);
                }

                @Override
                public void finish(String finishReason, int promptTokens, int completionTokens) {
                    finish.write(sink, finishReason, Usage.of(promptTokens, completionTokens));
                    sink.complete();
                }

                @Override
                public void error(Throwable error) {
                    sink.error(error);
                }
            });
            try {
                SequenceHandle handle = m.engine().submit(tokens, generation);
                sink.onDispose(handle::cancel);
            } catch (BackendException e) {
                sink.error(e);
            }
        }, FluxSink.OverflowStrategy.BUFFER);
    }

    /**
     * The chat prompt. A trailing assistant message is continued, not answered: the conversation
     * before it is rendered with the generation prompt and its text appended, so generation picks
     * up mid-message (what mid-stream failover needs).
     */
    private static String renderChat(LoadedModel m, List<ChatMessage> messages) {
        if (messages == null || messages.isEmpty()) {
            throw BackendException.invalidRequest("messages must not be empty", "messages");
        }
        ChatMessage last = messages.getLast();
        if ("assistant".equals(last.role()) && messages.size() > 1) {
            return m.template().render(messages.subList(0, messages.size() - 1), null, true) + last.text();
        }
        return m.template().render(messages, null, true);
    }

    private LoadedModel ready() {
        return loaded.isDone() && !loaded.isCompletedExceptionally() ? loaded.join() : null;
    }

    private LoadedModel requireReady(String model) {
        if (closed) {
            throw BackendException.unavailable("backend " + id + " is closed");
        }
        if (model != null && !model.equals(settings.modelName())) {
            throw new BackendException(BackendErrorKind.MODEL_NOT_FOUND,
                    "backend " + id + " serves '" + settings.modelName() + "', not '" + model + "'", "model", null, null);
        }
        LoadedModel m = ready();
        if (m == null) {
            throw loaded.isCompletedExceptionally()
                    ? BackendException.unavailable("backend " + id + " failed to load its model")
                    : BackendException.unavailable("backend " + id + " is still loading " + settings.modelName()
                            + " (" + Math.round(progress * 100) + " %)");
        }
        return m;
    }

    /** Waits for loading to finish (tests, embedders that want a warm backend). */
    public KtNativeBackend awaitReady(java.time.Duration timeout) throws Exception {
        loaded.get(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        return this;
    }

    @Override
    public void close() {
        closed = true;
        LoadedModel m = ready();
        if (m != null) {
            m.close();
        }
    }
}
