package dev.lazarus.kt.backend;

import dev.lazarus.backend.api.BackendCapabilities;
import dev.lazarus.backend.api.BackendDescriptor;
import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.CallContext;
import dev.lazarus.backend.api.BackendHealth;
import dev.lazarus.backend.api.ContextLengthExceededException;
import dev.lazarus.backend.api.ExpertPlacementView;
import dev.lazarus.backend.api.InferenceBackend;
import dev.lazarus.backend.api.JsonEndpoint;
import dev.lazarus.backend.api.ModelInfo;
import dev.lazarus.backend.api.SpeculativeDecodingView;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.backend.api.openai.Completion;
import dev.lazarus.backend.api.openai.CompletionRequest;
import dev.lazarus.backend.api.openai.Tool;
import dev.lazarus.kt.chat.AnswerParser;
import dev.lazarus.kt.chat.JsonAnswer;
import dev.lazarus.kt.grammar.CompiledGrammar;
import dev.lazarus.kt.grammar.GrammarCache;
import dev.lazarus.kt.grammar.GrammarException;
import dev.lazarus.kt.runtime.SequenceHandle;
import dev.lazarus.kt.sampling.Sampler;
import dev.lazarus.kt.sampling.SamplingParams;
import dev.lazarus.kt.sampling.TokenSampler;
import dev.lazarus.kt.speculative.SpeculationStats;
import dev.lazarus.kt.tensor.NativeKernels;
import dev.lazarus.kt.tokenizer.Tokenizer;
import dev.lazarus.kt.tokenizer.UnknownCharacterException;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.IntPredicate;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;

/**
 * The {@code kt-native} backend: the in-JVM engine behind the SPI. The model loads in the background
 * (health says LOADING with a percentage until then); every call streams chunks that end with a
 * usage chunk, and cancelling the stream cancels the sequence.
 */
public final class KtNativeBackend implements InferenceBackend, ExpertPlacementView, SpeculativeDecodingView {

    private static final System.Logger LOG = System.getLogger(KtNativeBackend.class.getName());
    /** Tokenize and detokenize from the model's own tokenizer; no embeddings or rerank (a generative model's engine). */
    private static final BackendCapabilities CAPABILITIES = new BackendCapabilities(true, true, true, true, false,
            EnumSet.of(JsonEndpoint.TOKENIZE, JsonEndpoint.DETOKENIZE));

    private final String id;
    private final KtNativeSettings settings;
    private final SamplerFactory samplers;
    /** The weights' bytes, all split parts, known before loading: preflight's memory wall runs while it loads. */
    private final OptionalLong modelBytes;
    private final CompletableFuture<LoadedModel> loaded = new CompletableFuture<>();
    private volatile double progress;
    /** When loading started ({@link System#nanoTime()}): the ETA health reports is the pace since then. */
    private final long loadStart = System.nanoTime();
    private volatile boolean closed;
    private final AtomicBoolean released = new AtomicBoolean();
    /** What the model file needs, from its header (null when it could not be read: loading then says why). */
    private final ModelNeeds needs;
    /** The model's compiled grammars; set before the model is ready, its vocabulary index built right after. */
    private volatile GrammarCache grammars;

    /** Makes the sampler of each request: the engine's {@link Sampler}; tests script the answer instead. */
    @FunctionalInterface
    interface SamplerFactory {
        TokenSampler create(SamplingParams params, int vocabSize, int contextSize);
    }

    KtNativeBackend(String id, KtNativeSettings settings) {
        this(id, settings, Sampler::new);
    }

    KtNativeBackend(String id, KtNativeSettings settings, SamplerFactory samplers) {
        this.id = id;
        this.settings = settings;
        this.samplers = samplers;
        this.modelBytes = ModelLoader.bytesOf(settings.model());
        ModelLoader loader = new ModelLoader(id, settings);
        // the preflight, before the gateway's own runs: the header only, no weights read
        this.needs = readNeeds(loader);
        Thread.ofPlatform().name("kt-load-" + id).daemon().start(() -> {
            try {
                if (needs != null && needs.refusal().isPresent()) {
                    // the preflight: refused before a byte of weights is read
                    LOG.log(Level.ERROR, "kt-native backend " + id + " cannot serve " + settings.model() + ": "
                            + needs.refusal().get());
                    loaded.completeExceptionally(new UnsupportedModelException(needs.refusal().get()));
                    return;
                }
                LoadedModel model = loader.load(p -> progress = p);
                // which kernels this backend multiplies with (its settings kernels, ggml-variant; /v1/models meta "kernels")
                String kernels = String.valueOf(model.facts().get("kernels"));
                String why = kernels.startsWith("java-") ? NativeKernels.unavailableReason() : "";
                LOG.log(Level.INFO, "kt-native backend " + id + " loaded " + settings.modelName() + ": kernels " + kernels
                        + (why.isEmpty() ? "" : " (native kernels unavailable: " + why + ")"));
                grammars = new GrammarCache(model.tokenizer());
                if (!loaded.complete(model) || closed) {
                    release(model);
                    return;
                }
                // while the model already serves: the first constrained request then finds the index ready
                grammars.prepare();
            } catch (RuntimeException | Error e) {
                LOG.log(Level.ERROR, "kt-native backend " + id + " failed to load " + settings.model(), e);
                loaded.completeExceptionally(e);
            }
        });
    }

    private ModelNeeds readNeeds(ModelLoader loader) {
        try {
            return loader.needs();
        } catch (RuntimeException e) {
            LOG.log(Level.DEBUG, "kt-native backend " + id + ": cannot read the header of " + settings.model(), e);
            return null;
        }
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public BackendDescriptor describe() {
        LoadedModel m = ready();
        Map<String, Object> facts = new LinkedHashMap<>(m == null ? Map.of("status", "loading") : m.facts());
        modelBytes.ifPresent(bytes -> facts.put(ModelInfo.SIZE_BYTES, bytes));
        if (m != null) {
            // live: acceptance and tokens per step so far
            m.engine().speculation().ifPresent(counts -> facts.put("speculative", SpeculationStats.facts(counts)));
        }
        if (needs != null) {
            facts.put(ModelInfo.NEEDS, needs.facts());
            needs.refusal().ifPresent(reason -> facts.put(ModelInfo.UNSUPPORTED, reason));
        }
        ModelInfo info = new ModelInfo(settings.modelName(), "lazarus",
                m == null ? 0 : m.engine().options().contextSize(), facts);
        return new BackendDescriptor(id, KtNativeBackendFactory.KIND, List.of(info), CAPABILITIES);
    }

    @Override
    public Mono<BackendHealth> health() {
        return Mono.fromSupplier(() -> {
            if (closed) {
                return BackendHealth.down("closed");
            }
            if (loaded.isCompletedExceptionally()) {
                Throwable e = loaded.exceptionNow();
                return BackendHealth.down(e instanceof UnsupportedModelException ? e.getMessage()
                        : "loading failed: " + e.getMessage());
            }
            LoadedModel m = ready();
            if (m == null) {
                return BackendHealth.loading("loading " + settings.modelName() + " (" + Math.round(progress * 100) + " %)",
                        progress, Duration.ofNanos(System.nanoTime() - loadStart));
            }
            // sequences: generating or waiting; forward_passes grows while the engine works
            return new BackendHealth(BackendHealth.Status.UP, "ok", Map.of("sequences", m.engine().load(),
                    "forward_passes", m.engine().steps()));
        });
    }

    @Override
    public Optional<PlacementSnapshot> expertPlacement() {
        return Optional.ofNullable(ready()).map(LoadedModel::placement).map(p -> p.snapshot());
    }

    @Override
    public boolean decodesSpeculatively() {
        return settings.speculative().type() != SpeculativeSettings.Type.NONE;
    }

    @Override
    public Optional<Counts> speculativeDecoding() {
        return Optional.ofNullable(ready()).flatMap(m -> m.engine().speculation());
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
        return this.<ChatCompletionChunk>generate(request.model(), "messages", m -> {
            SamplingParams params = SamplingParams.from(request);
            ToolUse tools = ToolUse.of(request);
            OutputConstraint constraint = OutputConstraint.of(request, tools, m.template().format());
            String rendered = renderChat(m, request.messages(), tools.tools(), ChatAnswer.templateKwargs(request, m.template().format()));
            AnswerParser answer = constraint.jsonContent() ? new JsonAnswer()
                    : ChatAnswer.parser(m.template().format(), rendered, tools, request);
            int[] prompt = m.tokenizer().encode(rendered, true, true);
            return new Job<>(prompt, params, compile(constraint, rendered), answer == null ? NO_CONTROL_TOKENS
                    : ChatAnswer.shownControlTokens(m.template().format(), m.tokenizer()),
                    sink -> new ChatStream(sink, "chatcmpl-" + UUID.randomUUID(), nowSeconds(), settings.modelName(),
                            new WireLogprobs(m.tokenizer()), answer));
        });
    }

    @Override
    public Flux<Completion> completion(CompletionRequest request) {
        return this.<Completion>generate(request.model(), "prompt", m -> {
            SamplingParams params = SamplingParams.from(request);
            LegacyPrompt prompt = LegacyPrompt.of(request, m.tokenizer());
            CompiledGrammar grammar = compile(OutputConstraint.of(request));
            return new Job<>(prompt.tokens(), params, grammar, NO_CONTROL_TOKENS, sink -> new CompletionStream(sink, "cmpl-" + UUID.randomUUID(),
                    nowSeconds(), settings.modelName(), new WireLogprobs(m.tokenizer()), prompt.echo()));
        });
    }

    @Override
    public Mono<Map<String, Object>> json(JsonEndpoint endpoint, Map<String, Object> request) {
        return Mono.fromCallable(() -> {
            String model = request.get("model") instanceof String name ? name : null;
            Tokenizer tokenizer = requireReady(model).tokenizer();
            return switch (endpoint) {
                case TOKENIZE -> {
                    try {
                        yield TokenizerEndpoints.tokenize(tokenizer, request);
                    } catch (UnknownCharacterException e) {
                        throw BackendException.invalidRequest(e.getMessage(), "content");
                    }
                }
                case DETOKENIZE -> TokenizerEndpoints.detokenize(tokenizer, request);
                case EMBEDDINGS, RERANK -> throw BackendException.invalidRequest(
                        "backend " + id + " does not serve " + endpoint.path(), "model");
            };
        });
    }

    private static final IntPredicate NO_CONTROL_TOKENS = id -> false;

    /**
     * What to run: the prompt, how to sample, which control tokens the answer writes as text, and how to write
     * the events into the endpoint's stream.
     */
    private record Job<T>(int[] prompt, SamplingParams params, CompiledGrammar grammar, IntPredicate shownControlTokens,
                          Function<FluxSink<T>, EndpointStream<T>> stream) {}

    /** The constraint's grammar compiled for the model; null when the output is free. Refused grammars are a 400. */
    private CompiledGrammar compile(OutputConstraint constraint) {
        return compile(constraint, null);
    }

    /** As {@link #compile(OutputConstraint)}, fed the generation prompt at the end of {@code rendered} (chat). */
    private CompiledGrammar compile(OutputConstraint constraint, String rendered) {
        if (!constraint.constrained()) {
            return null;
        }
        try {
            CompiledGrammar grammar = grammars.compile(constraint.gbnf());
            int head = constraint.head() == null || rendered == null ? -1 : rendered.lastIndexOf(constraint.head());
            if (constraint.head() != null && head < 0) {
                throw BackendException.invalidRequest("tool_choice 'required': the prompt does not end with the"
                        + " answer's opening " + constraint.head() + " that the call grammar starts with", "tool_choice");
            }
            return head < 0 ? grammar : grammar.after(rendered.substring(head));
        } catch (GrammarException e) {
            throw BackendException.invalidRequest(e.getMessage(), constraint.param());
        }
    }

    /**
     * One generation as a cold stream: the request is validated and tokenised on subscription, the
     * sequence is queued in the engine, and cancelling the subscription cancels the sequence. A prompt that
     * does not fit is blamed on {@code promptParam}, the request parameter that holds it.
     */
    private <T> Flux<T> generate(String model, String promptParam, Function<LoadedModel, Job<T>> prepare) {
        return Flux.<T>defer(() -> {
            LoadedModel m = requireReady(model);
            Job<T> job = prepare.apply(m);
            return Flux.create(sink -> {
                int vocab = m.tokenizer().vocabSize();
                int context = m.engine().options().contextSize();
                TokenSampler sampler = job.grammar() == null ? samplers.create(job.params(), vocab, context)
                        : new Sampler(job.params(), vocab, context, job.grammar().matcher());
                SequenceHandle handle = m.engine().submit(job.prompt(), new GenerationListener(m.tokenizer(),
                        sampler, job.params(), job.prompt(), job.shownControlTokens(), job.stream().apply(sink),
                        CallContext.prefillProgress(sink.contextView()).orElse(null)));
                sink.onDispose(handle::cancel);
            }, FluxSink.OverflowStrategy.BUFFER);
        }).onErrorMap(e -> switch (e) {
            case ContextLengthExceededException c when c.param() == null -> c.withParam(promptParam);
            case UnknownCharacterException u -> BackendException.invalidRequest(u.getMessage(), promptParam);
            case BackendException b -> b;
            default -> new BackendException(BackendErrorKind.INTERNAL, "kt-native: " + e, e);
        });
    }

    private static long nowSeconds() {
        return System.currentTimeMillis() / 1000;
    }

    /**
     * The chat prompt. A trailing assistant message is continued, not answered: the conversation
     * before it is rendered with the generation prompt and its text appended, so generation picks
     * up mid-message (what mid-stream failover needs). Tools are rendered into the prompt as the
     * template does it (the same prompt llama-server builds), with the request's {@code chat_template_kwargs}.
     */
    private static String renderChat(LoadedModel m, List<ChatMessage> messages, List<Tool> tools,
            Map<String, Object> kwargs) {
        if (messages == null || messages.isEmpty()) {
            throw BackendException.invalidRequest("messages must not be empty", "messages");
        }
        ChatMessage last = messages.getLast();
        if ("assistant".equals(last.role()) && messages.size() > 1) {
            return m.template().render(messages.subList(0, messages.size() - 1), tools, true, kwargs) + last.text();
        }
        return m.template().render(messages, tools, true, kwargs);
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
                    ? BackendException.unavailable("backend " + id + (loaded.exceptionNow() instanceof UnsupportedModelException u
                            ? " cannot serve its model: " + u.getMessage() : " failed to load its model"))
                    : BackendException.unavailable("backend " + id + " is still loading " + settings.modelName()
                            + " (" + Math.round(progress * 100) + " %)");
        }
        return m;
    }

    /** Waits for loading to finish (tests, embedders that want a warm backend). */
    public KtNativeBackend awaitReady(Duration timeout) throws Exception {
        loaded.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        return this;
    }

    @Override
    public void close() {
        closed = true;
        LoadedModel m = ready();
        if (m != null) {
            release(m);
        }
    }

    /** Closes the model once: a close() just after loading completes races the loader thread, which closes it too. */
    private void release(LoadedModel m) {
        if (released.compareAndSet(false, true)) {
            m.close();
        }
    }
}
